import ArgumentParser
import Foundation
import MonoRail
import MonoRailTransport

/// `monorail upload FILE --to URL`: sends a file as `multipart/form-data`, streamed from disk with
/// progress, and prints the server's answer.
struct UploadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upload",
        abstract: "Upload a file as multipart/form-data, streamed from disk, with progress.")

    @Argument(help: "The file to upload.")
    var file: String

    @Option(help: "The URL to POST to, such as http://127.0.0.1:3000/uploads.")
    var to: String

    @Option(help: "The form field name of the file part.")
    var field: String = "file"

    @Option(help: "The content type of the file part.")
    var mimeType: String = FileUpload.defaultMimeType

    @Flag(help: "Print the process's peak resident memory when done (Linux), to check that uploads stream.")
    var peakMemory = false

    func run() async throws {
        guard let url = URL(string: to), let scheme = url.scheme, scheme.hasPrefix("http") else {
            throw ValidationError("--to must be an http(s) URL")
        }
        var form = MultipartFormData()
        form.append(try FileUpload(fileURL: URL(fileURLWithPath: file), mimeType: mimeType), name: field)
        let api = APIClient(
            configuration: .init(baseURL: url, transport: MonoRail.defaultTransport, timeout: .seconds(600)))
        let reporter = ProgressPrinter()
        let response = try await api.send(
            APIRequest(
                method: .post, path: APIPath(verbatim: url.absoluteString), body: .multipart(form),
                options: RequestOptions(uploadProgress: { reporter.report($0) })))
        print(String(decoding: response.body, as: UTF8.self))
        if peakMemory, let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        {
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            print("peak resident memory: \(kilobytes * 1024) bytes")
        }
    }
}

/// Prints upload progress in steps of 10%.
final class ProgressPrinter: Sendable {
    private let lastStep = Locked(-1)

    func report(_ progress: TransferProgress) {
        guard let total = progress.totalBytes, total > 0 else { return }
        let step = Int(progress.completedBytes * 10 / total)
        let isNew = lastStep.withLock { last in
            guard step > last else { return false }
            last = step
            return true
        }
        if isNew { print("uploaded \(step * 10)% (\(progress.completedBytes) of \(total) bytes)") }
    }
}
