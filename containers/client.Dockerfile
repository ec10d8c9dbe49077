# wsbench-client: the static bench-client binary and nothing else (no shell, no libc, no package manager).
# Results are written with `--json /out/<file>` into a directory mounted at /out.
# Built by `cargo xtask build --images` / `cargo xtask run … --containers` from a context that holds
# <TARGETARCH>/bench-client (BuildKit sets TARGETARCH per platform; xtask passes it to the classic builder).
FROM scratch
ARG TARGETARCH
COPY ${TARGETARCH}/bench-client /bench-client
# Non-root by number: there is no /etc/passwd to name a user in.
USER 65532:65532
ENTRYPOINT ["/bench-client"]
