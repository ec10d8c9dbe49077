#!/usr/bin/env bash
# Interim build recipe for the peer servers (peers/README.md lists the same commands one by one; the xtask
# integration runs them with xshell's cmd!, not through this script). Usage: peers/build.sh jaxws|gsoap
# Builds into target/peers/<name>-<hash>/ (hash of the peer's sources and the WSDLs) unless that is already
# complete, then prints the directory.
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: peers/build.sh jaxws|gsoap}
case $name in jaxws | gsoap) ;; *) echo "unknown peer $name" >&2; exit 2 ;; esac

# The cache key (peers/README.md): the first 16 hex digits of the SHA-256 of one line per source file, in
# byte order of their paths: `<path>\0<SHA-256 of the file, hex>\n`, over peers/<name>/, peers/wsdl/ and this
# recipe.
hash=$(find "peers/$name" peers/wsdl peers/build.sh -type f | LC_ALL=C sort | while read -r f; do
    printf '%s\0%s\n' "$f" "$(sha256sum <"$f" | cut -d' ' -f1)"; done | sha256sum | cut -c1-16)
out=target/peers/$name-$hash
if [[ -e $out/complete ]]; then
    echo "$out"
    exit 0
fi
tmp=$out.partial
rm -rf "$tmp"
mkdir -p "$tmp"

case $name in
jaxws)
    mkdir -p "$tmp/gen" "$tmp/classes/wsdl"
    java -cp /usr/share/java/jaxws-tools.jar com.sun.tools.ws.WsImport -quiet -Xnocompile \
        -s "$tmp/gen" -d "$tmp/gen" -p dev.wsbench.peer.jaxws.cxf peers/wsdl/cxf.wsdl
    java -cp /usr/share/java/jaxws-tools.jar com.sun.tools.ws.WsImport -quiet -Xnocompile \
        -s "$tmp/gen" -d "$tmp/gen" -p dev.wsbench.peer.jaxws.customer peers/wsdl/customer.wsdl
    mapfile -t sources < <(find peers/jaxws/src "$tmp/gen" -name '*.java' | LC_ALL=C sort)
    javac -encoding UTF-8 -Xlint:all,-path -Werror -d "$tmp/classes" -cp /usr/share/java/jaxws-rt.jar "${sources[@]}"
    cp peers/wsdl/cxf.wsdl peers/wsdl/customer.wsdl "$tmp/classes/wsdl/"
    jar --create --file "$tmp/wsbench-jaxws.jar" --manifest peers/jaxws/MANIFEST.MF -C "$tmp/classes" .
    ;;
gsoap)
    mkdir -p "$tmp/gen"
    wsdl2h -t peers/gsoap/typemap.dat -o "$tmp/gen/services.h" peers/wsdl/cxf.wsdl peers/wsdl/customer.wsdl
    soapcpp2 -S -L -x -w -Ec -Ed -I/usr/share/gsoap/import -Ipeers/gsoap/src -d "$tmp/gen" "$tmp/gen/services.h"
    mapfile -t sources < <(find peers/gsoap/src -name '*.cpp' | LC_ALL=C sort)
    g++ -std=c++17 -O2 -g -Wall -Wextra -pthread -DWITH_IPV6 -DWITH_DOM -I"$tmp/gen" -Ipeers/gsoap/src \
        "${sources[@]}" "$tmp/gen/soapC.cpp" "$tmp/gen/soapServer.cpp" \
        -Wl,-Bstatic -lgsoap++ -Wl,-Bdynamic -o "$tmp/wsbench-gsoap"
    mkdir -p "$tmp/wsdl"
    cp peers/wsdl/cxf.wsdl peers/wsdl/customer.wsdl "$tmp/wsdl/"
    ;;
esac
touch "$tmp/complete"
rm -rf "$out"
mv "$tmp" "$out"
echo "$out"
