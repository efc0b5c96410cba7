@_exported public import MonoRailTransport
