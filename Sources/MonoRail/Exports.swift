@_exported public import MonoRailClient
