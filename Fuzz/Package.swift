// swift-tools-version:6.1
import PackageDescription

// libFuzzer targets for MonoRail's parsers, decoders and merges. Not part of the root package, so a
// plain `swift build` never builds them; `Fuzz/run.sh TARGET SECONDS` builds and runs one.
//
// Every target lives in FuzzTargets and is chosen at run time by MONORAIL_FUZZ_TARGET, so one
// instrumented build serves all of them. The executable's only file defines LLVMFuzzerTestOneInput;
// run.sh builds it with `--sanitize=fuzzer --sanitize=address`.
let package = Package(
    name: "MonoRailFuzz",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [
        .package(name: "MonoRail", path: ".."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        // Counts heap bytes through the sanitizer's malloc hooks, for per-input memory bounds.
        .target(name: "FuzzSupport"),
        .target(
            name: "FuzzTargets",
            dependencies: [
                "FuzzSupport",
                .product(name: "MonoRail", package: "MonoRail"),
                .product(name: "MonoRailClient", package: "MonoRail"),
                .product(name: "MonoRailServer", package: "MonoRail"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .executableTarget(name: "MonoRailFuzz", dependencies: ["FuzzTargets"]),
    ],
    swiftLanguageModes: [.v6]
)
