# t_escape.sh: other users' text on its way out of nvq.  A raw 0x9b (a CSI
# on 8-bit terminals), C1 controls in UTF-8 and bidi controls such as
# U+202E reach no terminal: tables show them as \x9b, \u009b, \u202e, and
# JSON stays JSON that a parser reads back.  Sourced by run.sh (lib.sh).

t_escape_out() {	# 0x9b and U+202E: escaped in list, show, history and their JSON
	write_config; start_nvqd || return
	local rlo=$'\xe2\x80\xae' csi=$'\x9b' c1=$'\xc2\x9b' lri=$'\xe2\x81\xa6'
	local done pend what out
	done=$(submit -g 0 -n "d${rlo}x" printf '%s' "a${csi}2J${rlo}b${c1}c${lri}d")
	pend=$(submit --hold -g 0 -n "p${rlo}x" printf '%s' "a${csi}2J${rlo}b")
	wait_state "$done" COMPLETED
	# a raw 0x9b, U+009B (whose UTF-8 holds 0x9b too), U+202E, U+2066: none comes out
	for what in "list" "list --json" "show $done" "show --json $done" "show $pend" \
	    "show --json $pend" "history" "history --json"; do
		# shellcheck disable=SC2086
		expect_none "nvq $what" "$(nvq $what 2>&1)" "$csi" "$rlo" "$lri"
	done
	# tables: visible escapes, as for the other controls
	expect_match "list: the name" "$(nvq list)" "p\\\\u202ex"
	expect_match "show: the command" "$(nvq show "$done")" \
	    "command +printf %s 'a\\\\x9b2J\\\\u202eb\\\\u009bc\\\\u2066d'"
	expect_match "history: the name" "$(nvq history)" "d\\\\u202ex"
	# JSON: UTF-8 that a parser reads; the byte that is not UTF-8 comes back as U+FFFD
	for what in "list --json" "show --json $done" "history --json"; do
		# shellcheck disable=SC2086
		out=$(nvq $what 2>&1 | python3 -c '
import json, sys
json.loads(sys.stdin.buffer.read().decode("utf-8"))
print("parsed")' 2>&1)
		expect_eq "nvq $what: JSON that python reads" "$out" parsed
	done
	out=$(nvq show --json "$done" | python3 -c '
import json, sys
print(ascii(json.loads(sys.stdin.buffer.read().decode("utf-8"))["job"]["command"]))')
	expect_eq "json: the command read back" "$out" \
	    "\"printf %s 'a\\ufffd2J\\u202eb\\x9bc\\u2066d'\""
	expect_match "json: written as escapes" "$(nvq show --json "$done")" \
	    'a\\ufffd2J\\u202eb\\u009bc\\u2066d'
	nvq cancel "$pend" > /dev/null
}

t_escape_web() {	# the dashboard's API: the same text, escaped as the tables show it
	local port out link rlo=$'\xe2\x80\xae' csi=$'\x9b' a
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	write_config "[web]" "listen = 127.0.0.1:$port"
	start_nvqd || return
	link=$(nvq web-token 2>&1) || { skip "nvqd built without the dashboard: $link"; return; }
	a=$(submit --hold -g 0 -n "w${rlo}x" printf '%s' "a${csi}2J${rlo}b")
	out=$(python3 -c 'import sys, urllib.request; sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1], timeout=5).read())' \
	    "http://127.0.0.1:$port/api/state?${link#*\?}")
	expect_none "/api/state" "$out" "$csi" "$rlo"
	expect_eq "what the page gets: visible escapes" "$(python3 -c '
import json, sys
for j in json.loads(sys.stdin.buffer.read().decode("utf-8"))["jobs"]:
    print(j["name"], j["command"])' <<< "$out")" "w\\u202ex printf %s 'a\\x9b2J\\u202eb'"
	expect_eq "the page inserts text as text (textContent), never as HTML" \
	    "$(grep -c 'innerHTML\|outerHTML\|insertAdjacentHTML\|document\.write' web/app.js)" 0
	nvq cancel "$a" > /dev/null
}

t_escape_latin1() {	# a terminal whose locale is not UTF-8 gets ASCII only: Û (C3 9B) is a CSI on a Latin-1 one
	write_config; start_nvqd || return
	local u=$'\xc3\x9b' e=$'\xc3\xa9' a loc what out
	a=$(submit --hold -g 0 -n "${u}2J" printf '%s' "${e}${u}")
	# the charset is LC_ALL's, else LC_CTYPE's, else LANG's; none set: the C locale's, ASCII
	for loc in "LANG=en_US.ISO-8859-1" "LANG=C.UTF-8 LC_ALL=C" "LANG=C.UTF-8 LC_CTYPE=POSIX" \
	    "LANG=de_DE@euro" ""; do
		for what in "list" "show $a" "list --json" "show --json $a"; do
			# shellcheck disable=SC2086
			out=$(env -u LC_ALL -u LC_CTYPE -u LANG $loc "$NVQ_BIN" -s "$T/sock" $what 2>&1)
			expect_eq "'$loc' nvq $what: ASCII only" \
			    "$(printf '%s' "$out" | LC_ALL=C tr -d '\000-\177' | wc -c)" 0
		done
		# shellcheck disable=SC2086
		out=$(env -u LC_ALL -u LC_CTYPE -u LANG $loc "$NVQ_BIN" -s "$T/sock" list)
		expect_match "'$loc' list: the name, byte by byte" "$out" " \\\\xc3\\\\x9b2J "
		# shellcheck disable=SC2086
		out=$(env -u LC_ALL -u LC_CTYPE -u LANG $loc "$NVQ_BIN" -s "$T/sock" show "$a")
		expect_match "'$loc' show: the command" "$out" \
		    "command +printf %s '\\\\xc3\\\\xa9\\\\xc3\\\\x9b'"
		# shellcheck disable=SC2086
		out=$(env -u LC_ALL -u LC_CTYPE -u LANG $loc "$NVQ_BIN" -s "$T/sock" show --json "$a")
		expect_match "'$loc' show --json: \\\\u escapes" "$out" '"name":"\\u00db2J"'
		expect_eq "'$loc' show --json: the name read back" "$(python3 -c '
import json, sys
print(ascii(json.loads(sys.stdin.read())["job"]["name"]))' <<< "$out")" "'\\xdb2J'"
	done
	# on a terminal of 30 columns, lines are cut with "~": "…" is no Latin-1 character
	out=$(python3 tests/system/pty_run.py 24 30 zzz '' -- "$(command -v env)" -u LC_ALL -u LC_CTYPE \
	    LANG=en_US.ISO-8859-1 "$NVQ_BIN" -s "$T/sock" list)
	expect_eq "a Latin-1 terminal: ASCII only" \
	    "$(printf '%s' "$out" | LC_ALL=C tr -d '\000-\177' | wc -c)" 0
	expect_match "a Latin-1 terminal: cut with ~" "$out" $'\n1 +root +\\\\xc3\\\\x9b2J[^\n]*~\r'
	# a UTF-8 locale (LC_CTYPE's over LANG's) is sent the text as it is
	for loc in "LANG=C.UTF-8" "LANG=en_US.ISO-8859-1 LC_CTYPE=en_US.utf8" "LC_ALL=UTF-8"; do
		# shellcheck disable=SC2086
		expect_match "'$loc' list: the name" \
		    "$(env -u LC_ALL -u LC_CTYPE -u LANG $loc "$NVQ_BIN" -s "$T/sock" list)" " ${u}2J "
	done
	nvq cancel "$a" > /dev/null
}

t_escape_invisible() {	# format characters (Unicode's Cf) are shown escaped; a typed "\u202e" stays six characters
	write_config; start_nvqd || return
	local zw=$'\xe2\x80\x8b' shy=$'\xc2\xad' bom=$'\xef\xbb\xbf' wj=$'\xe2\x81\xa0' \
	    tag=$'\xf3\xa0\x80\x81' a b
	a=$(submit --hold -g 0 -n "a${zw}b${shy}c${bom}d${wj}e${tag}f" true)
	b=$(submit --hold -g 0 -n 'x\u202ey' true)
	expect_none "nvq list" "$(nvq list)" "$zw" "$shy" "$bom" "$wj" "$tag"
	expect_none "nvq show" "$(nvq show "$a")" "$zw" "$shy" "$bom" "$wj" "$tag"
	expect_match "show: U+200B, U+00AD, U+FEFF, U+2060, U+E0001" "$(nvq show "$a")" \
	    'name +a\\u200bb\\u00adc\\ufeffd\\u2060e\\U000e0001f'
	expect_match "list: a backslash typed goes out as typed" "$(nvq list)" ' x\\u202ey '
	expect_match "show --json: the same as JSON escapes" "$(nvq show --json "$a")" \
	    '"name":"a\\u200bb\\u00adc\\ufeffd\\u2060e\\udb40\\udc01f"'
	expect_match "show --json: the backslash, as JSON writes it" "$(nvq show --json "$b")" \
	    '"name":"x\\\\u202ey"'
	nvq cancel "$a" "$b" > /dev/null
}
