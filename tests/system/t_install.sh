# t_install.sh: make install and uninstall under DESTDIR, and what they put there.

t_install() {	# make install DESTDIR: man pages render and cover the tables; both completions load
	local root=$T/root p=/usr/local out cmd key
	command -v man > /dev/null && command -v groff > /dev/null && command -v zsh > /dev/null ||
	    { skip "needs man, groff and zsh (the quickstart installs them)"; return; }
	make -s install BUILD="$BUILD" DESTDIR="$root" > "$T/install.log" 2>&1 ||
	    { fail "make install: $(tail -3 "$T/install.log")"; return; }
	for page in man1/nvq.1 man8/nvqd.8 man5/nvq.ini.5; do
		out=$(man -l "$root$p/share/man/$page" 2> "$T/man.err")
		expect_eq "man -l $page" "$?" 0
		expect_match "$page: its NAME" "$out" "NAME"
		expect_eq "$page: roff warnings" "$(groff -man -ww -z "$root$p/share/man/$page" 2>&1)" ""
	done
	# every command nvq has, every key nvqd reads, every option nvqd takes
	out=$(MANWIDTH=200 man -l "$root$p/share/man/man1/nvq.1")
	for cmd in $("$root$p/bin/nvq" --help | sed -n 's/^  \([a-z]*\) .*/\1/p'); do
		[[ "$out" == *"nvq $cmd "* ]] || fail "nvq.1 lacks the command $cmd"
	done
	out=$(MANWIDTH=200 man -l "$root$p/share/man/man5/nvq.ini.5")
	for key in $("$root$p/sbin/nvqd" --print-config | sed -n 's/^\([a-z_]*\) =.*/\1/p'); do
		[[ "$out" == *"$key = "* ]] || fail "nvq.ini.5 lacks the key $key"
	done
	out=$(MANWIDTH=200 man -l "$root$p/share/man/man8/nvqd.8")
	for key in -c -n -s --print-config; do
		[[ "$out" == *"$key"* ]] || fail "nvqd.8 lacks the option $key"
	done
	# the completions load
	expect_eq "bash completion" "$(bash -c "source '$root$p/share/bash-completion/completions/nvq' \
	    && complete -p nvq")" "complete -F _nvq nvq"
	expect_eq "zsh completion" "$(zsh -fc "fpath=('$root$p/share/zsh/vendor-completions' \$fpath); \
	    autoload -Uz compinit; compinit -u -d '$T/zcompdump'; print \${_comps[nvq]}")" "_nvq"
	# the installed nvqd checks the installed configuration
	"$root$p/sbin/nvqd" -n -c "$root/etc/nvq/nvq.ini"
	expect_eq "nvqd -n of the installed nvq.ini" "$?" 0
	expect_match "the unit names the installed nvqd" "$(cat "$root$p/lib/systemd/system/nvqd.service")" \
	    "ExecStart=$p/sbin/nvqd"
	# uninstall: what install put there goes; the configuration stays
	make -s uninstall BUILD="$BUILD" DESTDIR="$root" > "$T/uninstall.log" 2>&1
	expect_eq "uninstall leaves the configuration alone" "$(cd "$root" && find . -type f)" \
	    "./etc/nvq/nvq.ini"
}
