//! What Jetty answers before CXF, as bench-server answers there: `GET /` (the connection-churn scenarios' plain
//! HTTP GET) and `GET /health`; on a service path the project's WSDL at `?wsdl` (byte for byte, its soap:address
//! pointing back the way the client came), 405 for other GETs and methods, 413 for a body declared larger than
//! `--max-body`; 404 elsewhere. Every response says what served it (`Server`). Only a POST to a service path
//! within the bound goes on to CXF.
package dev.wsbench.peer.cxf;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/** The first handler of Jetty's sequence; CXF's contexts follow it. */
final class Front extends Handler.Abstract.NonBlocking {
    private static final String TEXT = "text/plain; charset=utf-8";
    private static final String INDEX = "wsbench peer: Apache CXF (JAX-WS frontend, Jetty transport)\n"
            + "POST " + PerfServiceImpl.PATH + "   CXF performance service (WSDL: ?wsdl)\n"
            + "POST " + CustomerServiceImpl.PATH + "                               Customer service (WSDL: ?wsdl)\n"
            + "GET  /health                                                 liveness\n";

    private final String server;
    /** Service path → its WSDL, with {@code REPLACE_WITH_ACTUAL_URL} where the endpoint's address goes. */
    private final Map<String, String> wsdls;
    private final long maxBody;

    Front(String server, Map<String, String> wsdls, long maxBody) {
        this.server = server;
        this.wsdls = wsdls;
        this.maxBody = maxBody;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        response.getHeaders().put(HttpHeader.SERVER, server);
        String path = Request.getPathInContext(request);
        String method = request.getMethod();
        String wsdl = wsdls.get(path);
        if (wsdl == null) {
            return plain(path, method, response, callback);
        }
        if (method.equals("GET") && wantsWsdl(request.getHttpURI().getQuery())) {
            String url = "http://" + authority(request) + path;
            send(response, callback, 200, "text/xml; charset=utf-8", wsdl.replace("REPLACE_WITH_ACTUAL_URL", url));
        } else if (method.equals("GET")) {
            response.getHeaders().put(HttpHeader.ALLOW, "POST");
            send(response, callback, 405, TEXT, "POST SOAP 1.1 requests here; the WSDL is at ?wsdl\n");
        } else if (!method.equals("POST")) {
            response.getHeaders().put(HttpHeader.ALLOW, "GET, POST");
            send(response, callback, 405, TEXT, "method not allowed\n");
        } else if (request.getLength() > maxBody) {
            response.getHeaders().put(HttpHeader.CONNECTION, "close");
            send(response, callback, 413, TEXT, "request body too large\n");
        } else {
            return false;
        }
        return true;
    }

    private static boolean plain(String path, String method, Response response, Callback callback) {
        if (!path.equals("/") && !path.equals("/health")) {
            send(response, callback, 404, TEXT, "not found; see / for the endpoints\n");
        } else if (!method.equals("GET")) {
            response.getHeaders().put(HttpHeader.ALLOW, "GET");
            send(response, callback, 405, TEXT, "method not allowed\n");
        } else {
            send(response, callback, 200, TEXT, path.equals("/") ? INDEX : "ok\n");
        }
        return true;
    }

    /** {@code ?wsdl} (any case, possibly among other query parameters), as bench-server recognises it. */
    static boolean wantsWsdl(String query) {
        if (query == null) {
            return false;
        }
        for (String p : query.split("&")) {
            if (p.equalsIgnoreCase("wsdl")) {
                return true;
            }
        }
        return false;
    }

    /**
     * The authority the client used (Host header), so a WSDL's soap:address points back the way it came; the
     * listener's address if the header is absent or has characters that do not belong in a host.
     */
    private static String authority(Request request) {
        String host = request.getHeaders().get(HttpHeader.HOST);
        if (host != null && !host.isEmpty() && host.chars().allMatch(Front::hostChar)) {
            return host;
        }
        return Request.getLocalAddr(request) + ":" + Request.getLocalPort(request);
    }

    private static boolean hostChar(int c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || c == '.' || c == '-' || c == ':' || c == '[' || c == ']';
    }

    /** A whole small response; an unread request body is Jetty's to drain or close on. */
    private static void send(Response response, Callback callback, int status, String type, String body) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, type);
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, bytes.length);
        response.write(true, ByteBuffer.wrap(bytes), callback);
    }
}
