import HTTPTypes
import Hummingbird

/// 405 `methodNotAllowed` for a method that no route of a known path takes, with `Allow` naming the
/// methods that some route does (RFC 9110 §15.5.6); a path that no route has stays 404. Hummingbird 2's
/// router answers both with 404, so the routes are matched here again, from the router's own table.
///
/// Added to the router after every route: a middleware applies only to the routes added after it, and
/// to the not-found responder, which the router builds with all of its middleware when it starts. So
/// this runs only for requests no route took, and costs nothing on the routes themselves.
struct MethodNotAllowedMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext

    /// Each route path with the methods its routes take.
    private let paths: [(path: RouterPath, methods: Set<HTTPRequest.Method>)]

    init(routes: [Router<Context>.RouteDescription]) {
        var byPath: [String: (path: RouterPath, methods: Set<HTTPRequest.Method>)] = [:]
        for route in routes {
            byPath[route.path.description, default: (route.path, [])].methods.insert(route.method)
        }
        paths = Array(byPath.values)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard let allow = allowedMethods(path: request.uri.path, method: request.method) else {
            return try await next(request, context)
        }
        var response = JSONResponse.error(
            APIError(.methodNotAllowed, .methodNotAllowed, "this path takes only \(allow)"))
        response.headers[.allow] = allow
        return response
    }

    /// The `Allow` value (alphabetical) for the route paths that `path` matches as Hummingbird's trie
    /// matches it (empty components skipped, a capture takes any one component); `nil` when none
    /// matches, or when one takes `method` after all (then the router's 404 stands).
    func allowedMethods(path: String, method: HTTPRequest.Method) -> String? {
        let components = path.split(separator: "/", omittingEmptySubsequences: true)
        let methods = paths.filter { route in
            route.path.components.count == components.count
                && zip(route.path.components, components).allSatisfy { element, component in element ~= component }
        }.reduce(into: Set<HTTPRequest.Method>()) { $0.formUnion($1.methods) }
        guard !methods.isEmpty, !methods.contains(method) else { return nil }
        return methods.map(\.rawValue).sorted().joined(separator: ", ")
    }
}
