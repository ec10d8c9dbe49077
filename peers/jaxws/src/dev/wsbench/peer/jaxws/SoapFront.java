//! What sits in front of the JAX-WS RI on a service path, as bench-server answers there: the project's WSDL at
//! `?wsdl` (byte for byte, its soap:address pointing back the way the client came), 405 for other GETs, 404
//! off the exact path, and a bound on the request body (413 when declared too large, an I/O error past it).
package dev.wsbench.peer.jaxws;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.HttpExchange;

/** A filter on one service's context. */
final class SoapFront extends Filter {
    private final String path;
    private final String wsdl;
    private final long maxBody;

    /** {@code wsdl} holds {@code REPLACE_WITH_ACTUAL_URL} where the endpoint's address goes. */
    SoapFront(String path, String wsdl, long maxBody) {
        this.path = path;
        this.wsdl = wsdl;
        this.maxBody = maxBody;
    }

    @Override
    public String description() {
        return "wsbench service front: WSDL, methods, body bound";
    }

    @Override
    public void doFilter(HttpExchange ex, Chain chain) throws IOException {
        String method = ex.getRequestMethod();
        if (!ex.getRequestURI().getPath().equals(path)) {
            Plain.send(ex, 404, "text/plain; charset=utf-8", "not found; see / for the endpoints\n");
        } else if (method.equals("GET") && wantsWsdl(ex.getRequestURI().getRawQuery())) {
            String url = "http://" + Plain.authority(ex) + path;
            Plain.send(ex, 200, "text/xml; charset=utf-8", wsdl.replace("REPLACE_WITH_ACTUAL_URL", url));
        } else if (method.equals("GET")) {
            ex.getResponseHeaders().set("Allow", "POST");
            Plain.send(ex, 405, "text/plain; charset=utf-8", "POST SOAP 1.1 requests here; the WSDL is at ?wsdl\n");
        } else if (!method.equals("POST")) {
            ex.getResponseHeaders().set("Allow", "GET, POST");
            Plain.send(ex, 405, "text/plain; charset=utf-8", "method not allowed\n");
        } else if (declaredLength(ex) > maxBody) {
            ex.getResponseHeaders().set("Connection", "close");
            Plain.send(ex, 413, "text/plain; charset=utf-8", "request body too large\n");
        } else {
            ex.setStreams(new Bounded(ex.getRequestBody(), maxBody), null);
            chain.doFilter(ex);
        }
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

    private static long declaredLength(HttpExchange ex) {
        String v = ex.getRequestHeaders().getFirst("Content-Length");
        if (v == null) {
            return -1;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }

    /** A request body that fails once more than {@code max} bytes have been read (chunked bodies). */
    static final class Bounded extends FilterInputStream {
        private long left;

        Bounded(InputStream in, long max) {
            super(in);
            left = max;
        }

        private int count(int n) throws IOException {
            if (n > 0 && (left -= n) < 0) {
                throw new IOException("request body larger than the server's bound");
            }
            return n;
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                count(1);
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            return count(super.read(b, off, len));
        }
    }
}
