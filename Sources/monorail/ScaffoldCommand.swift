import ArgumentParser
import Foundation
import MonoRail
import MonoRailScaffold

/// `monorail scaffold`: `@Resource` source from a sample response.
struct ScaffoldCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scaffold",
        abstract: "Write @Resource models for an existing API from a sample JSON response (a file or a URL).")

    @Argument(help: "A JSON file, or an http(s) URL to GET.")
    var source: String

    @Option(help: "The main model's name, for bodies without a root key.")
    var name: String?

    @Option(help: "Write the source to this file instead of standard output.")
    var output: String?

    func run() async throws {
        let data: Data
        if let url = URL(string: source), url.scheme == "http" || url.scheme == "https" {
            let client = APIClient(baseURL: url, transport: MonoRail.defaultTransport)
            data = try await client.send(APIRequest(method: .get, path: APIPath(verbatim: url.absoluteString))).body
        } else {
            data = try Data(contentsOf: URL(fileURLWithPath: source))
        }
        let sample: JSONValue
        do {
            sample = try JSONParser().parse(data)
        } catch {
            throw ValidationError("the sample is not valid JSON: \(error)")
        }
        let source = try Scaffold.source(from: sample, name: name)
        if let output {
            try Data(source.utf8).write(to: URL(fileURLWithPath: output))
        } else {
            print(source, terminator: "")
        }
    }
}
