import Foundation
import FuzzSupport

/// The fuzz targets, chosen by the `MONORAIL_FUZZ_TARGET` environment variable.
///
/// Each one takes arbitrary bytes and checks what must hold for any input: no trap, a typed error
/// or a value, agreement between two paths that must agree, and a heap bounded by the input. A
/// broken invariant stops the process with `fatalError`, which libFuzzer reports as a finding.
public enum FuzzTarget: String, CaseIterable, Sendable {
    case json
    case messagePackReader = "msgpack-reader"
    case messagePackDecoder = "msgpack-decoder"
    case valueDecoder = "value-decoder"
    case form
    case multipart
    case dates
    case retryAfter = "retry-after"
    case contentType = "content-type"
    case routeTemplates = "route-templates"
    case messagePackList = "msgpack-list"
    case jsonList = "json-list"
    case openAPI = "openapi"
    case eventStream = "eventstream"
    case jsonAPI = "jsonapi"

    /// The target the environment names; stops with the list of names when it names none.
    public static let selected: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["MONORAIL_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            let names = allCases.map(\.rawValue).joined(separator: ", ")
            fatalError("set MONORAIL_FUZZ_TARGET to one of: \(names)")
        }
        MemoryBound.start()
        return target
    }()

    /// Runs the target on one input.
    public func run(_ bytes: UnsafeRawBufferPointer) {
        let data = Data(bytes)
        switch self {
        case .json: JSONFuzz.run(data)
        case .messagePackReader: MessagePackFuzz.reader(data)
        case .messagePackDecoder: MessagePackFuzz.decoder(data)
        case .valueDecoder: ValueDecoderFuzz.run(data)
        case .form: FormFuzz.run(data)
        case .multipart: MultipartFuzz.run(data)
        case .dates: DateFuzz.run(data)
        case .retryAfter: HeaderFuzz.retryAfter(data)
        case .contentType: HeaderFuzz.contentType(data)
        case .routeTemplates: HeaderFuzz.routeTemplate(data)
        case .messagePackList: ListFuzz.run(data, contentType: ListFuzz.messagePack)
        case .jsonList: ListFuzz.run(data, contentType: ListFuzz.json)
        case .openAPI: OpenAPIFuzz.run(data)
        case .eventStream: EventStreamFuzz.run(data)
        case .jsonAPI: JSONAPIFuzz.run(data)
        }
    }
}

/// Peak heap per input, measured through the sanitizer's malloc hooks.
enum MemoryBound {
    /// Whether the hooks are installed; installing happens once, on first use.
    static let active = monorail_memory_start() != 0

    static func start() { _ = active }

    /// Runs `body` and stops when the heap grew by more than `perByte` × the input plus `slack`
    /// at any moment: a reader must never allocate for data the input does not hold.
    static func check(inputSize: Int, perByte: Int = 64, slack: Int = 1 << 20, _ body: () -> Void) {
        guard active else { return body() }
        let base = monorail_memory_reset_peak()
        body()
        let growth = monorail_memory_peak() - base
        if growth > inputSize * perByte + slack {
            fatalError("the heap grew by \(growth) bytes for \(inputSize) bytes of input")
        }
    }
}
