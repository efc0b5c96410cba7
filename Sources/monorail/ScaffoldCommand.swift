import ArgumentParser
import Foundation
import HTTPTypes
import MonoRail
import MonoRailScaffold

/// `monorail scaffold`: `@Resource` source from a sample response or an OpenAPI document.
struct ScaffoldCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scaffold",
        abstract: "Write @Resource models for an existing API from a sample JSON response or an OpenAPI document.",
        discussion: """
            From a sample:        monorail scaffold http://127.0.0.1:8000/books/1
            From an OpenAPI file: monorail scaffold --openapi http://127.0.0.1:8000/openapi.json --output Models
            """)

    @Argument(help: "A sample JSON response: a file, or an http(s) URL to GET.")
    var source: String?

    @Option(
        help: "An OpenAPI 3 document in JSON (a file or an http(s) URL): one model per resource, and a configuration.")
    var openapi: String?

    @Option(help: "The main model's name, for a sample; by default the URL's path names it (/books/1 → Book).")
    var name: String?

    @Option(help: "Write to this file (a sample) or folder (an OpenAPI document) instead of standard output.")
    var output: String?

    @Option(help: "The access level of what is written: internal, package or public.")
    var access: String = "internal"

    func validate() throws {
        guard (source == nil) != (openapi == nil) else {
            throw ValidationError("give either a sample (a file or URL) or --openapi, not both, nor neither")
        }
        guard Scaffold.Access(rawValue: access) != nil else {
            throw ValidationError("--access must be internal, package or public")
        }
        if openapi != nil, name != nil {
            throw ValidationError("--name names a sample's model; an OpenAPI document names its own")
        }
    }

    func run() async throws {
        let access = Scaffold.Access(rawValue: access) ?? .internal
        do {
            if let openapi {
                let output = try Scaffold.models(
                    fromOpenAPI: try await Self.read(openapi, accept: Self.openAPIAccept), access: access)
                for warning in output.warnings { Self.standardError("warning: \(warning)") }
                try write(output.files)
            } else if let source {
                let data = try await Self.read(source, accept: "application/json")
                let sample: JSONValue
                do {
                    sample = try JSONParser().parse(data)
                } catch {
                    throw Scaffold.Failure("the sample is not valid JSON: \(error)")
                }
                let text = try Scaffold.source(
                    from: sample, name: name, defaultName: Scaffold.modelName(fromPath: Self.path(of: source)))
                if let output {
                    try Data(text.utf8).write(to: URL(fileURLWithPath: output))
                } else {
                    print(text, terminator: "")
                }
            }
        } catch let failure as Scaffold.Failure {
            Self.standardError("error: \(failure.description)")
            throw ExitCode(65)
        }
    }

    /// JSON first: drf-spectacular and other servers that also speak YAML answer in JSON when asked.
    static let openAPIAccept = "application/vnd.oai.openapi+json, application/json;q=0.9, */*;q=0.1"

    private func write(_ files: [Scaffold.File]) throws {
        guard let output else {
            for file in files { print("// MARK: - \(file.name)\n\n\(file.contents)") }
            return
        }
        let folder = URL(fileURLWithPath: output, isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for file in files {
            try Data(file.contents.utf8).write(to: folder.appendingPathComponent(file.name), options: .atomic)
            print(folder.appendingPathComponent(file.name).path)
        }
    }

    /// A file's bytes, or a URL's body.
    static func read(_ source: String, accept: String) async throws -> Data {
        guard let url = URL(string: source), url.scheme == "http" || url.scheme == "https" else {
            do {
                return try Data(contentsOf: URL(fileURLWithPath: source))
            } catch {
                throw Scaffold.Failure("cannot read \(source): \(error.localizedDescription)")
            }
        }
        var configuration = APIClient.Configuration(baseURL: url, transport: MonoRail.defaultTransport)
        // Large APIs publish documents of several megabytes (GitHub's is about 12 MB).
        configuration.maxResponseBodySize = Scaffold.maximumDocumentSize
        let client = APIClient(configuration: configuration)
        do {
            return try await client.send(
                APIRequest(method: .get, path: APIPath(verbatim: url.absoluteString), headers: [.accept: accept])
            ).body
        } catch let error as APIError {
            throw Scaffold.Failure("cannot GET \(source): \(error.message)")
        }
    }

    /// The path of a URL, or of a file name, that names a sample's model.
    static func path(of source: String) -> String {
        if let url = URL(string: source), url.scheme == "http" || url.scheme == "https" { return url.path }
        return URL(fileURLWithPath: source).deletingPathExtension().lastPathComponent
    }

    static func standardError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
