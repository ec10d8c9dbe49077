//! The bound on a request body that declares no length (chunked): past `--max-body` bytes reading it fails, and
//! CXF answers with a fault. A declared length past it never gets here (Front answers 413).
package dev.wsbench.peer.cxf;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

import org.apache.cxf.message.Message;
import org.apache.cxf.phase.AbstractPhaseInterceptor;
import org.apache.cxf.phase.Phase;

/** An in-interceptor at the first phase, before anything reads the body. */
final class BodyBound extends AbstractPhaseInterceptor<Message> {
    private final long max;

    BodyBound(long max) {
        super(Phase.RECEIVE);
        this.max = max;
    }

    @Override
    public void handleMessage(Message message) {
        InputStream in = message.getContent(InputStream.class);
        if (in != null) {
            message.setContent(InputStream.class, new Bounded(in, max));
        }
    }

    /** A stream that fails once more than {@code max} bytes have been read. */
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
