// swift-tools-version:6.1
import CompilerPluginSupport
import PackageDescription

// Every target is built in Swift 6 mode with these upcoming features, so that each
// `public import` is a deliberate layering decision and every existential is spelled `any`.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "MonoRail",
    // Observation's floor: the lowest an app that watches its models can ship on.
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    products: [
        .library(name: "MonoRail", targets: ["MonoRail"]),
        .library(name: "MonoRailClient", targets: ["MonoRailClient"]),
        .library(name: "MonoRailTransport", targets: ["MonoRailTransport"]),
        .library(name: "MonoRailAsyncHTTPClient", targets: ["MonoRailAsyncHTTPClient"]),
        .library(name: "MonoRailSQLite", targets: ["MonoRailSQLite"]),
        .library(name: "MonoRailServer", targets: ["MonoRailServer"]),
        .library(name: "MonoRailServerPostgres", targets: ["MonoRailServerPostgres"]),
        .library(name: "MonoRailTesting", targets: ["MonoRailTesting"]),
        .executable(name: "monorail", targets: ["monorail"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-atomics", from: "1.3.0"),
        // Spans and measurements; both already come with Hummingbird and AsyncHTTPClient.
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.1"),
        // Builds the DocC catalogs (`.ci/run`); a plugin only, nothing links it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // Layer 1: transport abstraction and the Foundation URLSession transport.
        .target(
            name: "MonoRailTransport",
            dependencies: [
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HTTPTypesFoundation", package: "swift-http-types"),
            ]
        ),
        // Layer 1b: the AsyncHTTPClient transport, kept apart so the core stays light.
        .target(
            name: "MonoRailAsyncHTTPClient",
            dependencies: [
                "MonoRailTransport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ]
        ),
        // Layer 2: the configured API client.
        .target(
            name: "MonoRailClient",
            dependencies: [
                "MonoRailTransport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        // The compiler plugin behind @Resource; only the macro target pays for swift-syntax.
        .macro(
            name: "MonoRailMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ]
        ),
        // Layer 3: resources, the identity map and the umbrella module users import; picks
        // AsyncHTTPClient as the default transport on Linux.
        .target(
            name: "MonoRail",
            dependencies: [
                "MonoRailTransport",
                "MonoRailClient",
                "MonoRailMacros",
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HTTPTypesFoundation", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .target(name: "MonoRailAsyncHTTPClient", condition: .when(platforms: [.linux])),
            ]
        ),
        // Layer 4: storage in SQLite through GRDB; the core never imports GRDB.
        .target(
            name: "MonoRailSQLite",
            dependencies: [
                "MonoRail",
                "MonoRailTransport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // Layer 5: the reference server, a real backend speaking the Rails conventions.
        .target(
            name: "MonoRailServer",
            dependencies: [
                "MonoRailTransport",
                "MonoRailClient",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        // The reference server's records on PostgreSQL (`monorail serve --database postgres://…`), apart
        // so that only the command and its tests build postgres-nio.
        .target(
            name: "MonoRailServerPostgres",
            dependencies: [
                "MonoRailServer",
                "MonoRailTransport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // For an app's own tests: the reference server and a scripted server, each on a free port with
        // a store pointed at it.
        .target(
            name: "MonoRailTesting",
            dependencies: [
                "MonoRail",
                "MonoRailServer",
                "MonoRailTransport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // Layer 5: `monorail scaffold`'s engine, writing models from a sample response.
        .target(
            name: "MonoRailScaffold",
            dependencies: ["MonoRailClient"]
        ),
        // Layer 5: the `monorail` command.
        .executableTarget(
            name: "monorail",
            dependencies: [
                "MonoRail",
                "MonoRailSQLite",
                "MonoRailTransport",
                "MonoRailServer",
                "MonoRailServerPostgres",
                "MonoRailScaffold",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The outbox crash harness: `swift run OutboxCrashHarness --writes 1000 --kills 100`.
        .executableTarget(
            name: "OutboxCrashHarness",
            dependencies: [
                "MonoRail", "MonoRailSQLite", "MonoRailServer",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/OutboxCrashHarness"
        ),
        // A small Hummingbird server the tests talk to over loopback.
        .target(
            name: "TestServer",
            dependencies: [
                "MonoRail",
                "MonoRailTesting",
                "MonoRailTransport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tests/TestServer"
        ),
        .testTarget(
            name: "MonoRailTransportTests",
            dependencies: [
                "MonoRailTransport", "MonoRailAsyncHTTPClient", "MonoRailTesting", "TestServer",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .testTarget(
            name: "MonoRailServerTests",
            dependencies: [
                "MonoRailServer", "MonoRailServerPostgres", "MonoRail", "MonoRailAsyncHTTPClient", "MonoRailTesting",
                "MonoRailTransport", "TestServer",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            exclude: ["Support/start-postgres.sh"]
        ),
        .testTarget(
            name: "MonoRailMacrosTests",
            dependencies: [
                "MonoRailMacros",
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
            ]
        ),
        // The models most suites share (the trains example, SPEC.md's and the seeds'), `package` so every
        // test target reads the same ones.
        .target(
            name: "TestModels",
            dependencies: ["MonoRail", "MonoRailServer"],
            path: "Tests/TestModels"
        ),
        .testTarget(
            name: "MonoRailTests",
            dependencies: [
                "MonoRail", "MonoRailClient", "MonoRailServer", "MonoRailSQLite", "MonoRailTesting",
                "MonoRailTransport", "TestModels", "TestServer",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            exclude: ["Support/parse_multipart.py"]
        ),
        .testTarget(
            name: "MonoRailSQLiteTests",
            dependencies: [
                "MonoRail", "MonoRailClient", "MonoRailServer", "MonoRailSQLite", "MonoRailTesting", "TestModels",
                "MonoRailTransport", "TestServer", "OutboxCrashHarness",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "MonoRailTestingTests",
            dependencies: ["MonoRail", "MonoRailTesting", "MonoRailTransport"]
        ),
        // `monorail scaffold --openapi` run on the FastAPI and Django apps' documents, as written;
        // MonoRailScaffoldTests checks that scaffolding them again writes exactly these.
        .target(
            name: "ScaffoldedModels",
            dependencies: ["MonoRail"],
            path: "Tests/ScaffoldedModels"
        ),
        .testTarget(
            name: "MonoRailScaffoldTests",
            dependencies: ["MonoRail", "MonoRailScaffold", "MonoRailTesting", "ScaffoldedModels", "TestServer"]
        ),
        .testTarget(
            name: "MonoRailClientTests",
            dependencies: [
                "MonoRail", "MonoRailClient", "MonoRailAsyncHTTPClient", "MonoRailTesting", "TestServer",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["Fixtures"]
        ),
    ]
)

// libFuzzer targets (Fuzz/), only when MONORAIL_FUZZ is set, so a plain `swift build` never builds
// them; `Fuzz/run.sh TARGET SECONDS` sets it. They share the AddressSanitizer build CI runs the codec
// tests with, and one executable serves every target, chosen by MONORAIL_FUZZ_TARGET.
if Context.environment["MONORAIL_FUZZ"] != nil {
    package.targets += [
        // Counts heap bytes through the sanitizer's malloc hooks, for per-input memory bounds.
        .target(name: "FuzzSupport", path: "Fuzz/Sources/FuzzSupport"),
        .target(
            name: "FuzzTargets",
            dependencies: [
                "FuzzSupport", "MonoRail", "MonoRailClient", "MonoRailServer", "MonoRailScaffold",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Fuzz/Sources/FuzzTargets"
        ),
        // libFuzzer is linked here only (`--sanitize=fuzzer` for the whole build would also give the
        // @Resource macro's compiler plugin libFuzzer's `main`); main.swift hands it control.
        .executableTarget(
            name: "MonoRailFuzz", dependencies: ["FuzzSupport", "FuzzTargets"], path: "Fuzz/Sources/MonoRailFuzz",
            linkerSettings: [.unsafeFlags(["-sanitize=fuzzer,address", "-use-ld=lld"])]
        ),
    ]
}

for target in package.targets {
    target.swiftSettings = (target.swiftSettings ?? []) + strictSettings
}

// MONORAIL_SANITIZE=thread|address instruments this package's own code and leaves the dependencies
// (swift-syntax, NIO, GRDB, BoringSSL) as the plain build compiled them, so a sanitized build in the
// plain build's scratch path recompiles only MonoRail: CI's sanitizer runs take minutes, not a cold
// build each. The macro plugin runs inside the compiler and is never instrumented. With MONORAIL_FUZZ
// the address build also carries the coverage libFuzzer steers by.
if let sanitizer = Context.environment["MONORAIL_SANITIZE"] {
    var flags = ["-sanitize=\(sanitizer)"]
    if sanitizer == "address", Context.environment["MONORAIL_FUZZ"] != nil {
        flags += ["-sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table"]
    }
    for target in package.targets where target.type != .macro && target.type != .plugin {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(flags)]
        if target.name != "MonoRailFuzz" {
            target.linkerSettings = (target.linkerSettings ?? []) + [.unsafeFlags(["-sanitize=\(sanitizer)"])]
        }
    }
}
