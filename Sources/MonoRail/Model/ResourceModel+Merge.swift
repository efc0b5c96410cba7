public import Foundation
import HTTPTypes

extension ResourceModel {
    /// Merges the records of a list body received some other way (a cache, a push payload, a file)
    /// into the store, exactly as ``get(in:)`` merges a response: `{"trains": […]}`, a bare array, a
    /// namespace, per the model's conventions.
    ///
    /// ```swift
    /// let trains = try Train.merge(listBody: cachedData)
    /// ```
    ///
    /// - Parameters:
    ///   - body: The bytes.
    ///   - contentType: How the bytes are written: JSON unless this names MessagePack
    ///     (`application/x-msgpack`).
    ///   - store: The identity map to merge into.
    /// - Returns: The live instances, in body order.
    /// - Throws: ``APIError``: ``APIError/Code/decodingFailed`` or ``APIError/Code/inconsistentResponse``;
    ///   nothing is merged when it throws.
    public static func merge(
        listBody body: Data, contentType: String = "application/json", in store: ResourceStore = .default
    ) throws -> [Self] {
        let pipeline = ActionPipeline<Self>(store: store)
        return try pipeline.mergeList(receivedResponse(body, contentType: contentType, setup: pipeline.setup))
    }

    /// Merges one record body received some other way into the store, as ``get(id:include:parameters:in:)`` merges a
    /// response: `{"train": {…}}` or a bare object.
    ///
    /// - Parameters:
    ///   - body: The bytes.
    ///   - contentType: How the bytes are written, as in ``merge(listBody:contentType:in:)``.
    ///   - store: The identity map to merge into.
    /// - Returns: The live instance.
    /// - Throws: ``APIError``, as ``merge(listBody:contentType:in:)``.
    public static func merge(
        recordBody body: Data, contentType: String = "application/json", in store: ResourceStore = .default
    ) throws -> Self {
        let pipeline = ActionPipeline<Self>(store: store)
        return try pipeline.mergeRecord(
            receivedResponse(body, contentType: contentType, setup: pipeline.setup), expecting: nil, target: nil,
            mode: .read)
    }

    private static func receivedResponse(_ body: Data, contentType: String, setup: ModelSetup<Self>) -> APIResponse {
        var response = HTTPResponse(status: .ok)
        response.headerFields[.contentType] = contentType
        return APIResponse(
            request: HTTPRequest(method: .get, scheme: nil, authority: nil, path: setup.path), response: response,
            body: body, decoder: setup.client.responseDecoder)
    }
}
