import MonoRail
import TestServer

extension FaultTransport {
    /// A fault transport over the transport the model-layer tests talk over (``transportUnderTest``).
    static func underTest() -> FaultTransport {
        FaultTransport(transportUnderTest ?? MonoRail.defaultTransport)
    }
}
