#if os(Linux)
    import MonoRailAsyncHTTPClient
#endif

/// The MonoRail namespace: defaults shared by the whole package.
public enum MonoRail {
    /// The transport MonoRail uses unless told otherwise: `AsyncHTTPClientTransport` on Linux, where
    /// it measured about twice as fast as FoundationNetworking, and ``/MonoRailTransport/URLSessionTransport`` elsewhere.
    ///
    /// ```swift
    /// let api = APIClient(baseURL: url, transport: MonoRail.defaultTransport)
    /// ```
    public static var defaultTransport: any Transport {
        #if os(Linux)
            AsyncHTTPClientTransport()
        #else
            URLSessionTransport.shared
        #endif
    }
}
