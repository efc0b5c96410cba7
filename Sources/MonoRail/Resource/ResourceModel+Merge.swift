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
    ///   - body: The JSON bytes.
    ///   - store: The identity map to merge into.
    /// - Returns: The live instances, in body order.
    /// - Throws: ``APIError``: ``APIError/Code/decodingFailed`` or ``APIError/Code/inconsistentResponse``;
    ///   nothing is merged when it throws.
    public static func merge(listBody body: Data, in store: ResourceStore = .default) throws -> [Self] {
        let context = try store.context(for: Self.self)
        return try mergeList(receivedResponse(body, context: context), context: context, store: store)
    }

    /// Merges one record body received some other way into the store, as ``get(id:in:)`` merges a
    /// response: `{"train": {…}}` or a bare object.
    ///
    /// - Parameters:
    ///   - body: The JSON bytes.
    ///   - store: The identity map to merge into.
    /// - Returns: The live instance.
    /// - Throws: ``APIError``, as ``merge(listBody:in:)``.
    public static func merge(recordBody body: Data, in store: ResourceStore = .default) throws -> Self {
        let context = try store.context(for: Self.self)
        return try mergeRecord(
            receivedResponse(body, context: context), context: context, store: store, expecting: nil, target: nil,
            mode: .read)
    }

    private static func receivedResponse(_ body: Data, context: ModelContext<Self>) -> APIResponse {
        var response = HTTPResponse(status: .ok)
        response.headerFields[.contentType] = "application/json"
        return APIResponse(
            request: HTTPRequest(method: .get, scheme: nil, authority: nil, path: context.path), response: response,
            body: body, decoder: context.client.responseDecoder)
    }
}
