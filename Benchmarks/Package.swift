// swift-tools-version:6.1
import PackageDescription

// Benchmarks for MonoRail, run with `swift package benchmark` (release builds). Not part of CI.
let package = Package(
    name: "MonoRailBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "MonoRail", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        // The payload of shared/bench/make-trains-json.py and the plain structs baselines decode into.
        .target(name: "BenchPayload", path: "Benchmarks/BenchPayload"),
        // The metric and timing helpers every benchmark target records with.
        .target(
            name: "BenchSupport",
            dependencies: [.product(name: "Benchmark", package: "benchmark")],
            path: "Benchmarks/BenchSupport"
        ),
        .executableTarget(
            name: "ClientBenchmarks",
            dependencies: [
                "BenchPayload",
                "BenchSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "MonoRail", package: "MonoRail"),
                .product(name: "MonoRailAsyncHTTPClient", package: "MonoRail"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/ClientBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "ResourceBenchmarks",
            dependencies: [
                "BenchPayload",
                "BenchSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "MonoRail", package: "MonoRail"),
            ],
            path: "Benchmarks/ResourceBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "JSONAPIBenchmarks",
            dependencies: [
                "BenchSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "MonoRail", package: "MonoRail"),
            ],
            path: "Benchmarks/JSONAPIBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // The reference server, which the round-trip benchmarks start in a process of their own.
        .executableTarget(
            name: "RoundTripServer",
            dependencies: [
                .product(name: "MonoRailServer", package: "MonoRail"),
                .product(name: "MonoRailServerPostgres", package: "MonoRail"),
            ],
            path: "Server"
        ),
        .executableTarget(
            name: "RoundTripBenchmarks",
            dependencies: [
                "BenchSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "MonoRail", package: "MonoRail"),
                .product(name: "MonoRailAsyncHTTPClient", package: "MonoRail"),
            ],
            path: "Benchmarks/RoundTripBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "OutboxBenchmarks",
            dependencies: [
                "BenchSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "MonoRail", package: "MonoRail"),
                .product(name: "MonoRailSQLite", package: "MonoRail"),
            ],
            path: "Benchmarks/OutboxBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "LiveQueryBenchmarks",
            dependencies: [
                "BenchSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "MonoRail", package: "MonoRail"),
            ],
            path: "Benchmarks/LiveQueryBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "LiveUpdatesBenchmarks",
            dependencies: [
                "BenchSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "MonoRail", package: "MonoRail"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/LiveUpdatesBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "StorageBenchmarks",
            dependencies: [
                "BenchSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "MonoRail", package: "MonoRail"),
                .product(name: "MonoRailSQLite", package: "MonoRail"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Benchmarks/StorageBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // A small GET against a fast server in another process (Scripts/fast_server.py, Python's
        // http.server), against AsyncHTTPClient + JSONDecoder.
        .executableTarget(
            name: "FastServerBenchmarks",
            dependencies: [
                "BenchSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "MonoRail", package: "MonoRail"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/FastServerBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "FormatBenchmarks",
            dependencies: [
                "BenchPayload",
                "BenchSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "MonoRail", package: "MonoRail"),
            ],
            path: "Benchmarks/FormatBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
