/// The MonoRail seed's global networking settings, kept under its name.
///
/// ```swift
/// Networking.delegate = MySession()   // as the seed's AppDelegate does
/// ```
public enum Networking {
    /// The ``/MonoRailClient/NetworkingDelegate`` of the default store: its headers and parameters go with every
    /// request its models send, and it hears every response's headers. Setting it is
    /// `MonoRail.configure { $0.networkingDelegate = … }`; other stores keep their own.
    public static var delegate: (any NetworkingDelegate)? {
        get { MonoRail.configuration.networkingDelegate }
        set { MonoRail.configure { $0.networkingDelegate = newValue } }
    }
}
