import Foundation
import HTTPTypes
import MonoRailAsyncHTTPClient
import MonoRailTransport
import Testing

/// The transports every conformance test runs against.
enum TransportKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case urlSession
    case asyncHTTPClient

    var testDescription: String { rawValue }

    func make(timeout: Duration = .seconds(30)) -> any Transport {
        switch self {
        case .urlSession: URLSessionTransport(configuration: .init(timeout: timeout))
        case .asyncHTTPClient: AsyncHTTPClientTransport(configuration: .init(timeout: timeout))
        }
    }
}

func request(_ method: HTTPRequest.Method = .get, _ url: URL, path: String, headers: HTTPFields = [:]) -> HTTPRequest {
    var request = HTTPRequest(method: method, scheme: "http", authority: "127.0.0.1:\(url.port ?? 80)", path: path)
    request.headerFields = headers
    return request
}

func json(_ data: Data) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
}

/// Collects progress reports from any thread.
final class ProgressLog: Sendable {
    private let reports = Locked<[TransferProgress]>([])
    func record(_ progress: TransferProgress) { reports.withLock { $0.append(progress) } }
    var all: [TransferProgress] { reports.withLock { $0 } }
}

/// FNV-1a, the checksum the test server reports for request bodies.
func fnv1a(_ data: Data) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    data.withUnsafeBytes { bytes in
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    }
    return String(hash, radix: 16)
}

/// Random bytes, filled a word at a time: byte-by-byte generation takes seconds in debug builds and
/// would starve the two-thread cooperative pool the other tests share.
func randomData(count: Int) -> Data {
    var generator = SystemRandomNumberGenerator()
    var data = Data(count: count)
    data.withUnsafeMutableBytes { bytes in
        let words = bytes.bindMemory(to: UInt64.self)
        for index in words.indices { words[index] = generator.next() }
    }
    return data
}
