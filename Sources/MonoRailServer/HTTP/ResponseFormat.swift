import Foundation
import Hummingbird
import MonoRailClient

/// The format a response is written in, negotiated from the request's `Accept`: MessagePack when
/// the client ranks `application/x-msgpack` (or `application/msgpack`) above JSON, else JSON.
enum ResponseFormat: Sendable, Equatable {
    case json
    case messagePack

    init(_ request: Request) {
        self.init(accept: request.headers[.accept])
    }

    init(accept: String?) {
        guard let accept else {
            self = .json
            return
        }
        var best: (format: ResponseFormat, quality: Double)?
        for item in accept.split(separator: ",") {
            let pieces = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let mediaType = pieces.first else { continue }
            let quality =
                pieces.dropFirst().compactMap { piece -> Double? in
                    piece.hasPrefix("q=") ? Double(piece.dropFirst(2)) : nil
                }.first ?? 1
            let format: ResponseFormat
            if WireFormat.isMessagePack(mediaType) {
                format = .messagePack
            } else if mediaType == "application/json" || mediaType == "*/*" || mediaType == "application/*" {
                format = .json
            } else {
                continue
            }
            if quality > 0, quality > (best?.quality ?? 0) { best = (format, quality) }
        }
        self = best?.format ?? .json
    }

    var contentType: String {
        switch self {
        case .json: "application/json; charset=utf-8"
        case .messagePack: "application/x-msgpack"
        }
    }

    func encode(_ body: JSONValue) -> Data {
        switch self {
        case .json: body.jsonData(sortedKeys: true)
        case .messagePack: MessagePackWriter.serialize(body)
        }
    }
}
