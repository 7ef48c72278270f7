import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The order a session consults its `URLProtocol`s in, made Apple's on Linux.
///
/// Apple's platforms consult the protocols registered with `URLProtocol.registerClass` before
/// their own. FoundationNetworking consults them in the order they were registered, and it
/// registers its own (http, ftp, data) when the first session of the process is made: a
/// test's protocol registered afterwards is listed after them and never sees an https request.
enum ProtocolOrder {
    /// `session`, or when its configuration lists FoundationNetworking's protocols before
    /// others and it has no delegate that a copy would lose, a session with the same
    /// configuration that consults the others first, latest first.
    static func applesOrder(for session: URLSession) -> URLSession {
        #if canImport(FoundationNetworking)
        let configuration = session.configuration
        let classes = configuration.protocolClasses ?? []
        let builtIn = classes.filter(isFoundationNetworkings)
        let registered = classes.filter { !isFoundationNetworkings($0) }
        guard session.delegate == nil, !registered.isEmpty, !builtIn.isEmpty,
              let firstRegistered = classes.firstIndex(where: { !isFoundationNetworkings($0) }),
              let firstBuiltIn = classes.firstIndex(where: isFoundationNetworkings),
              firstBuiltIn < firstRegistered else { return session }
        configuration.protocolClasses = registered.reversed() + builtIn
        return URLSession(configuration: configuration)
        #else
        return session
        #endif
    }

    private static func isFoundationNetworkings(_ protocolClass: AnyClass) -> Bool {
        String(reflecting: protocolClass).hasPrefix("FoundationNetworking.")
    }
}
