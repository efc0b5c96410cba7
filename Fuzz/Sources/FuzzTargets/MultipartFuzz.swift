import Foundation
import NIOCore

@testable import MonoRailServer

/// Multipart bodies as the reference server reads them, fed in chunks: fields and files, or an
/// `APIProblem`, and nothing left on disk after a refusal.
///
/// Input: the first line is the `Content-Type`; the first byte of the rest sets the chunk size.
enum MultipartFuzz {
    static let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "monorail-fuzz-\(ProcessInfo.processInfo.processIdentifier)")

    static func run(_ data: Data) {
        let bytes = [UInt8](data)
        let newline = bytes.firstIndex(of: 10) ?? bytes.count
        let contentType = String(decoding: bytes[..<newline], as: UTF8.self)
        var body = bytes.dropFirst(newline + 1)
        let chunkSize = Int(body.popFirst() ?? 0) + 1
        let parse: MultipartReceiver.Parse
        do {
            parse = try MultipartReceiver.Parse(contentType: contentType, directory: directory, maxSize: 1 << 16)
        } catch {
            guard error is APIProblem else { fatalError("not an APIProblem: \(error)") }
            return
        }
        MemoryBound.check(inputSize: bytes.count, perByte: 64, slack: 4 << 20) {
            do {
                while !body.isEmpty {
                    try parse.feed(ByteBuffer(bytes: body.prefix(chunkSize)))
                    body = body.dropFirst(chunkSize)
                }
                let received = try parse.finish()
                for file in received.files where file.storedAs.isEmpty {
                    fatalError("a file part was received but not stored: \(file.field)")
                }
                parse.discard()
            } catch {
                guard error is APIProblem else { fatalError("not an APIProblem: \(error)") }
            }
        }
        let left = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        if !left.isEmpty { fatalError("\(left.count) files left after the body was handled") }
    }
}
