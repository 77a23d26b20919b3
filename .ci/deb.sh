#!/usr/bin/env bash
# deb.sh: builds the Debian package from a clean copy of the tree, installs
# it with dpkg -i, and checks what it installed: nvqd -n on the installed
# configuration, the man pages, the hook where nvqd looks for it.
set -euo pipefail
cd "$(dirname "$0")/.."
w=$(mktemp -d)
git ls-files -z | xargs -0 cp --parents -t "$w" 2>/dev/null || cp -r . "$w"
cp -r debian "$w/"
(cd "$w" && dpkg-buildpackage -us -uc -b > "$w.log" 2>&1) ||
    { tail -30 "$w.log"; echo "deb: the build failed"; exit 1; }
deb=$(ls "$(dirname "$w")"/nvq_*_*.deb | grep -v dbgsym | head -1)
echo "deb: built $(basename "$deb")"
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO dpkg -i "$deb"
fail=0
check() { if "$@"; then echo "ok   - $*"; else echo "FAIL - $*"; fail=1; fi; }
check /usr/sbin/nvqd -n -c /etc/nvq/nvq.ini
check sh -c "dpkg-query -W -f='\${Conffiles}' nvq | grep -q ' /etc/nvq/nvq.ini '"
check man -w nvq
check man -w nvqd
check man -w 5 nvq.ini
check test -x /usr/libexec/nvq/nvq-shim
check test -f /usr/libexec/nvq/libnvq-hook.so
check test -x /usr/libexec/nvq/bin/srun
unit=$(dpkg -L nvq | grep '/systemd/system/nvqd.service$')
check grep -q 'ExecStart=/usr/sbin/nvqd' "$unit"
# the unit enabled by the package's own scripts (dh_installsystemd found it)
check grep -q 'deb-systemd-helper' /var/lib/dpkg/info/nvq.postinst
check test -L /etc/systemd/system/multi-user.target.wants/nvqd.service
# what the unit names as its documentation is installed
for d in $(sed -n 's/^Documentation=//p' "$unit"); do
	page=${d#man:}
	page=${page%)}
	check man -w "${page#*(}" "${page%(*}"
done
check sh -c '/usr/bin/nvq --help | grep -q "web-token"'
# the guide the man pages point to, where Debian keeps a package's documents
check sh -c 'zcat -f /usr/share/doc/nvq/README.md* | grep -q "^## Coming from Slurm"'
check sh -c 'ls /usr/share/doc/nvq/ | grep -q "^design.md"'
# the Python package, where Debian's python3 finds it (from /: the tree's nvq/ is C)
check sh -c 'cd / && /usr/bin/python3 -c "import nvq; assert nvq.__file__.startswith(\"/usr/lib/python3/dist-packages/nvq/\"), nvq.__file__; nvq.Executor"'
$SUDO dpkg -P nvq > /dev/null
check test ! -e /usr/sbin/nvqd
check test ! -e /usr/lib/python3/dist-packages/nvq
rm -rf "$w" "$w.log"
[ "$fail" = 0 ] && echo "deb: all good"
exit "$fail"
