//! The peer's command line, in bench-server's spelling where the meaning is the same.
package dev.wsbench.peer.cxf;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/** Parsed flags; {@link #parse} exits with status 2 and a usage line on a bad one. */
final class Flags {
    static final String USAGE = "usage: wsbench-cxf [--http HOST:PORT] [--workers N] [--store-cap N]"
            + " [--max-body BYTES] [--schema-validation on|off]\n"
            + "  --http       listen address, port 0 picks a free one [127.0.0.1:8080]\n"
            + "  --workers    threads of Jetty's pool (min = max = N; Jetty leases the connector's acceptor and"
            + " selectors and one reserved thread from it and needs one more to serve, so at least 4, more with"
            + " more cores) [CXF's default: Jetty's own pool, 8 to 200 threads]\n"
            + "  --store-cap  most customers the store keeps (a ring: the oldest are overwritten) [100000]\n"
            + "  --max-body   largest request body accepted (larger ones get HTTP 413) [8388608]\n"
            + "  --schema-validation  check every request against the WSDL's schema (CXF's"
            + " schema-validation-enabled=IN), so a wrong value is a Client fault, as bench-server's [on]\n";

    InetSocketAddress http = new InetSocketAddress(InetAddress.getLoopbackAddress(), 8080);
    /** 0: CXF's default (no threading parameters: Jetty's QueuedThreadPool as it comes). */
    int workers = 0;
    int storeCap = 100_000;
    /** bench-server's store_prefill default. */
    int storePrefill = 1_000;
    long maxBody = 8L * 1024 * 1024;
    boolean schemaValidation = true;

    static Flags parse(String[] args) {
        Flags f = new Flags();
        try {
            for (int i = 0; i < args.length; i++) {
                String name = args[i];
                if (name.equals("-h") || name.equals("--help")) {
                    System.out.print(USAGE);
                    System.exit(0);
                }
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException(name + " needs a value");
                }
                String v = args[++i];
                switch (name) {
                    case "--http": f.http = address(v); break;
                    case "--workers": f.workers = atLeast(name, v, 4); break;
                    case "--store-cap": f.storeCap = atLeast(name, v, 1); break;
                    case "--max-body": f.maxBody = atLeast(name, v, 1); break;
                    case "--schema-validation": f.schemaValidation = onOff(name, v); break;
                    default: throw new IllegalArgumentException("unknown flag " + name);
                }
            }
        } catch (IllegalArgumentException | UnknownHostException e) {
            System.err.print("wsbench-cxf: " + e.getMessage() + "\n" + USAGE);
            System.exit(2);
        }
        return f;
    }

    private static int atLeast(String name, String v, int min) {
        int n;
        try {
            n = Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + ": not a number: " + v);
        }
        if (n < min) {
            throw new IllegalArgumentException(name + " must be at least " + min);
        }
        return n;
    }

    private static boolean onOff(String name, String v) {
        switch (v) {
            case "on": return true;
            case "off": return false;
            default: throw new IllegalArgumentException(name + ": on or off, not " + v);
        }
    }

    /** HOST:PORT, [V6]:PORT. */
    private static InetSocketAddress address(String v) throws UnknownHostException {
        int colon = v.lastIndexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException("--http: expected HOST:PORT, e.g. 127.0.0.1:8080, not " + v);
        }
        String host = v.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(v.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--http: bad port in " + v);
        }
        return new InetSocketAddress(InetAddress.getByName(host), port);
    }
}
