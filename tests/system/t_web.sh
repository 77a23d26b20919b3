# t_web.sh: the dashboard and /metrics, through a browser and Prometheus' parser.

# web_port: a free port on loopback
web_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# web_get PATH: the body (stdout) of GET http://$WEB$PATH; fails on an HTTP error
web_get() { python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "http://$WEB$1"; }
# web_browser OUT URL [FLAGS...]: the DOM headless Chromium made of URL, into OUT
web_browser() {
	local out=$1 url=$2; shift 2
	timeout 60 chromium-headless-shell --no-sandbox --disable-gpu --user-data-dir="$T/chrome" \
	    "$@" --dump-dom "$url" > "$out" 2> "$T/chrome.log"
}

t_web() {	# the dashboard: state, history, metrics; who sees what; it outlives an nvqd restart
	command -v chromium-headless-shell > /dev/null && /usr/bin/python3 -c 'import prometheus_client' 2> /dev/null ||
	    { skip "needs a browser and Prometheus' parser: apt-get install chromium-headless-shell python3-prometheus-client (CI has them)"; return; }
	make_users || { fail "cannot create users"; return; }
	chmod 755 "$T"
	local port; port=$(web_port)
	WEB=127.0.0.1:$port
	write_config "[gpus]" "virtual = 2x16G" "[web]" "listen = $WEB"
	start_nvqd || return
	local a b c d out rootlink talink
	a=$(submit -m 6G -n rootrun sh -c 'sleep 300; : SECRET-ROOT')
	b=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable -m 4G -n tarun sh -c 'sleep 300; : SECRET-TA')
	c=$(submit -g 2 -m 15G -n waiting sleep 1)
	d=$(submit -g 0 -n done true)
	wait_state "$a" RUNNING; wait_state "$b" RUNNING; wait_state "$d" COMPLETED
	rootlink=$(nvq web-token)
	talink=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" web-token)
	expect_match "web-token: a link" "$rootlink" "^http://$WEB/\?token=[0-9a-f]{48}$"
	expect_eq "web-token again: the same" "$(nvq web-token)" "$rootlink"
	# the API: no names nor commands without a token
	out=$(web_get /api/state)
	expect_match "state: GPUs" "$out" '"gpus":\[\{"index":0'
	expect_match "state: counts" "$out" '"counts":\{"RUNNING":2,"SUSPENDED":0,"PENDING":1\}'
	expect_eq "no token: no user names, no commands" "$(echo "$out" | grep -c 'SECRET\|"user"\|"command"')" 0
	out=$(web_get "/api/state?token=${talink#*token=}")
	expect_match "nvqta's token: its own command" "$out" "SECRET-TA"
	expect_eq "nvqta's token: not root's command" "$(echo "$out" | grep -c SECRET-ROOT)" 0
	expect_match "nvqta's token: user names" "$out" '"user":"root"'
	expect_match "root's token: every command" "$(web_get "/api/state?${rootlink#*\?}")" "SECRET-ROOT.*SECRET-TA|SECRET-TA.*SECRET-ROOT"
	expect_match "a wrong token: refused" "$(web_get '/api/state?token=00' 2>&1)" "403"
	expect_match "read-only" "$(python3 -c 'import urllib.request as u; u.urlopen(u.Request("http://'"$WEB"'/api/state", data=b"x"))' 2>&1)" "405"
	out=$(web_get "/api/history?${rootlink#*\?}")
	expect_match "history: samples, GPU-hours, waits" "$out" '"samples":\[\{"t":.*"gpu_hours":\[.*"wait":\{"started":'
	# /metrics, read by Prometheus' own parser
	web_get /metrics > "$T/metrics" || fail "GET /metrics"
	out=$(/usr/bin/python3 - "$T/metrics" <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
v = {}
for f in text_string_to_metric_families(open(sys.argv[1]).read()):
    for s in f.samples:
        v[(s.name, tuple(sorted(s.labels.items())))] = s.value
print(int(v[("nvq_jobs", (("state", "RUNNING"),))]), int(v[("nvq_jobs", (("state", "COMPLETED"),))]),
      int(v[("nvq_gpu_memory_bytes", (("gpu", "0"), ("kind", "total"), ("uuid", "GPU-00000000-0000-0000-0000-000000000000")))]) >> 30,
      int(v[("nvq_job_wait_seconds_count", ())]), int(v[("nvq_job_run_seconds_count", ())]))
PY
)
	expect_eq "metrics: running, completed, a GPU's total, waits and runs counted" "$out" "2 1 16 3 1"
	# the page, run by a browser: nvqta sees its command, not root's; nobody else sees either
	web_browser "$T/ta.html" "$talink" --virtual-time-budget=5000
	expect_match "browser: the GPUs drawn" "$(cat "$T/ta.html")" 'class="bar"'
	expect_match "browser: the summary" "$(cat "$T/ta.html")" "2 GPUs, 2 running, 0 suspended, 1 pending"
	expect_match "browser: nvqta's own command" "$(cat "$T/ta.html")" "SECRET-TA"
	expect_eq "browser: root's command hidden from nvqta" "$(grep -c SECRET-ROOT "$T/ta.html")" 0
	expect_match "browser: why a job waits" "$(cat "$T/ta.html")" "needs 15G on 2 GPUs"
	web_browser "$T/anon.html" "http://$WEB/" --virtual-time-budget=5000
	expect_eq "browser, no token: no command" "$(grep -c SECRET "$T/anon.html")" 0
	expect_match "browser, no token: hidden" "$(cat "$T/anon.html")" 'class="hidden">hidden'
	# screenshots, desktop and phone
	timeout 60 chromium-headless-shell --no-sandbox --disable-gpu --user-data-dir="$T/chrome" \
	    --virtual-time-budget=5000 --window-size=1280,1100 --screenshot="$T/desktop.png" "$rootlink" > /dev/null 2>> "$T/chrome.log"
	timeout 60 chromium-headless-shell --no-sandbox --disable-gpu --user-data-dir="$T/chrome" \
	    --virtual-time-budget=5000 --window-size=390,1300 --screenshot="$T/phone.png" "$rootlink" > /dev/null 2>> "$T/chrome.log"
	expect_eq "screenshots made" "$(python3 -c 'import sys; print(sum(open(f, "rb").read(8) == b"\x89PNG\r\n\x1a\n" for f in sys.argv[1:]))' "$T/desktop.png" "$T/phone.png")" 2
	# nvqd restarts under the open page: it says so, then goes on with the same link
	local cport; cport=$(web_port)
	chromium-headless-shell --no-sandbox --disable-gpu --user-data-dir="$T/chrome2" \
	    --remote-debugging-port="$cport" about:blank > /dev/null 2>> "$T/chrome.log" &
	local br=$! i
	for i in $(seq 50); do python3 tests/system/cdp.py "$cport" open "$rootlink" 2> /dev/null && break; sleep 0.2; done
	out=$(python3 tests/system/cdp.py "$cport" wait \
	    "document.getElementById('summary').textContent.includes('2 running') && 'drawn'")
	expect_eq "a live page: drawn" "$out" drawn
	stop_nvqd
	out=$(python3 tests/system/cdp.py "$cport" wait "document.getElementById('status').textContent")
	expect_match "nvqd stopped: the page says so" "$out" "nvqd does not answer"
	start_nvqd || { pkill -f "user-data-dir=$T/chrome2"; return; }
	local e; e=$(submit -g 0 -n after-restart sleep 60)
	out=$(python3 tests/system/cdp.py "$cport" wait \
	    "document.body.textContent.includes('after-restart') && document.getElementById('status').textContent === '' && 'back'")
	expect_eq "nvqd back: the page goes on, the new job there" "$out" back
	# the browser and every process it started
	pkill -f "user-data-dir=$T/chrome2"; wait "$br" 2> /dev/null
	expect_match "the link still works" "$(web_get "/api/state?${rootlink#*\?}")" '"viewer_uid":"0"'
	nvq cancel "$a" "$b" "$c" "$e" > /dev/null 2>&1
	as_user nvqta "$NVQ_BIN" -s "$T/sock" cancel "$b" > /dev/null 2>&1
}
