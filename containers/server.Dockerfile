# wsbench-server: the static bench-server binary and nothing else (no shell, no libc, no package manager).
# Built by `cargo xtask build --images` / `cargo xtask run … --containers` from a context that holds
# <TARGETARCH>/bench-server (BuildKit sets TARGETARCH per platform; xtask passes it to the classic builder).
FROM scratch
ARG TARGETARCH
COPY ${TARGETARCH}/bench-server /bench-server
# Non-root by number: there is no /etc/passwd to name a user in.
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["/bench-server"]
CMD ["--http", "0.0.0.0:8080"]
