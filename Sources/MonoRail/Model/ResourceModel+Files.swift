public import Foundation

extension ResourceModel {
    /// The file a URL of this record names — its image, its attachment — kept in the store's
    /// ``MonoRail/Configuration/fileCache`` under a name of the record's own (Objects' `file(name:url:)`).
    ///
    /// ```swift
    /// @Resource final class User {
    ///     var imageURL: String?   // "/uploads/7", or "https://cdn.example.com/u/7.jpg"
    /// }
    ///
    /// // Bound to the field: fetched again only when the URL changes.
    /// Image(data: image)
    ///     .task(id: user.imageURL) { image = try? await user.file(name: "image", url: user.imageURL) }
    /// ```
    ///
    /// - The kept copy is served without a request: a file that changes is given a new URL. Asked
    ///   with a new URL, the file is fetched and the one the name held before is dropped, so a record
    ///   keeps one copy per name however often it changes.
    /// - A path, or a URL on the API's origin, is fetched as any request of the model is, with the
    ///   app's headers and middleware. A URL of another origin is fetched without them
    ///   (``/MonoRailClient/RequestOptions/isAnonymous``): the URL is the server's data, and a CDN — or whoever a
    ///   hostile server names — must not see the app's tokens.
    /// - A record the server has not given an id yet fetches the file but names nothing.
    ///
    /// - Parameters:
    ///   - name: Which of the record's files: `"image"`, `"avatar"`.
    ///   - url: A path under the API root or an absolute URL; `nil` (no image) returns `nil`.
    /// - Returns: The file's bytes; `nil` when `url` is `nil`.
    /// - Throws: ``/MonoRailClient/APIError/Code/invalidConfiguration`` when the store has no file cache;
    ///   ``/MonoRailClient/APIError`` as a request does when nothing is kept and the file cannot be fetched.
    public func file(name: String, url: String?) async throws -> Data? {
        guard let url else { return nil }
        let store = _$state.snapshot().store ?? .default
        let setup = store.setup(for: Self.self)
        guard let cache = setup.fileCache else {
            throw APIError(
                .invalidConfiguration,
                "\(Self.resourceSchema.typeName).file(name: \"\(name)\") needs a file cache: set configuration.fileCache"
            )
        }
        let path = APIPath(verbatim: url)
        let options = RequestOptions(timeout: setup.timeout, operationName: "\(Self.resourceSchema.typeName).file")
        guard let id = _$state.state.withLock(\.id) else {
            return try await cache.data(from: path, using: setup.client, options: options)
        }
        let owner = "\(setup.singular)/\(id.description)/\(name)"
        return try await cache.file(path, named: owner, using: setup.client, options: options)
    }

    /// ``file(name:url:)-(_,String?)`` for a field of type `URL`.
    public func file(name: String, url: URL?) async throws -> Data? {
        try await file(name: name, url: url?.absoluteString)
    }
}
