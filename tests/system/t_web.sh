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
	# the charts say which GPU each is, and have a size axis and a time axis
	expect_match "browser: each chart names its GPU" "$(cat "$T/ta.html")" "<figcaption>GPU 1 \\(Virtual GPU\\), 16G: demanded"
	expect_match "browser: a size axis to the GPU's memory" "$(cat "$T/ta.html")" 'data-what="GPU 0 memory" data-y="0,8.0G,16G"'
	expect_match "browser: the queue's axis in whole jobs" "$(cat "$T/ta.html")" 'data-what="jobs" data-y="0,[0-9]+,[0-9]+"'
	expect_match "browser: a time axis" "$(cat "$T/ta.html")" 'data-x="[0-9]{2}:[0-9]{2}(,[0-9]{2}:[0-9]{2},[0-9]{2}:[0-9]{2})?"'
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
	expect_eq "/metrics after a restart: what a scan of the history says" "$(web_metrics_match)" same
	nvq cancel "$a" "$b" "$c" "$e" > /dev/null 2>&1
	as_user nvqta "$NVQ_BIN" -s "$T/sock" cancel "$b" > /dev/null 2>&1
}

# web_metrics_match: "same" if /metrics says what a scan of the database says
# (the queries /metrics ran before its counters), else what differs
web_metrics_match() {
	web_load get "${WEB#*:}" /metrics 127.0.0.99 > "$T/m.txt"
	/usr/bin/python3 - "$T/nvq.db" "$T/m.txt" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
m = {}
for line in open(sys.argv[2]).read().splitlines()[1:]:
    if line and not line.startswith("#"):
        k, v = line.rsplit(" ", 1)
        m[k] = float(v)
want = {}
for st, n in db.execute("SELECT state, count(*) FROM jobs GROUP BY state"):
    want['nvq_jobs{state="%s"}' % st] = n
for name, q in (("nvq_job_wait_seconds", "SELECT min(r.started_at) - j.submitted_at FROM jobs j "
                 "JOIN runs r ON r.job_id = j.id GROUP BY j.id"),
                ("nvq_job_run_seconds", "SELECT ended_at - started_at - coalesce(suspended_time, 0) "
                 "FROM runs WHERE ended_at IS NOT NULL")):
    v = [r[0] for r in db.execute(q)]
    want[name + "_count"] = len(v)
    want[name + "_sum"] = round(sum(v), 3)
    for le in (1, 10, 60, 300, 1800, 3600, 21600, 86400):
        want['%s_bucket{le="%g"}' % (name, le)] = sum(x <= le for x in v)
for kind, ok, n, secs in db.execute("SELECT kind, ok, count(*), sum(seconds) FROM switches "
                                    "GROUP BY kind, ok"):
    want['nvq_switches_total{kind="%s",ok="%d"}' % (kind, ok)] = n
bad = ["%s: %s, a scan says %s" % (k, m.get(k), v) for k, v in sorted(want.items())
       if m.get(k) is None or abs(m[k] - v) > 0.01 + 1e-9 * abs(v)]
print("; ".join(bad) if bad else "same")
PY
}

# web_load ARGS...: tests/system/webload.py (connections held, scrapers, a GET from an address)
web_load() { python3 "$ROOT/tests/system/webload.py" "$@"; }

t_web_flood() {	# past its connection limits the listener serves again, with no restart
	local port; port=$(web_port)
	WEB=127.0.0.1:$port
	write_config "[web]" "listen = $WEB" "timeout = 2s"
	start_nvqd || return
	local a out i; a=$(submit -g 0 -n flooded sleep 300)
	wait_state "$a" RUNNING
	# one address holds 100 connections open and idle, and never closes them
	local flooded_at=$SECONDS
	web_load hold "$port" 100 40 127.0.0.1 > "$T/held" &
	local holder=$!
	for i in $(seq 50); do [ -s "$T/held" ] && break; sleep 0.1; done
	expect_eq "the flood: connected" "$(cat "$T/held")" 100
	out=$(web_load get "$port" /metrics 127.0.0.2)
	expect_match "another address, during the flood: /metrics" "$out" '^200'
	# the flood's connections are idle past [web] timeout: closed, so its address is served too
	sleep 3.5
	out=$(web_load get "$port" /api/state 127.0.0.1)
	expect_match "its own address, 3.5 s on (timeout = 2s): /api/state" "$out" '^200.*"counts":\{"RUNNING":1,'
	kill "$holder" 2> /dev/null; wait "$holder" 2> /dev/null
	# a request's head trickling in, a byte every 0.2 s, never idle: closed once [web] timeout is past
	out=$(web_load trickle "$port" 8 127.0.0.2)
	expect_match "a trickling request's head: closed after 2 s and before 4" "$out" '^[23]\.[0-9]$'
	# past the total limit (128) from 10 addresses (16 each), held 1.5 s, then all
	# closed at once by the client: the listener takes the next ones at once
	web_load hold "$port" 20 1.5 "$(seq -s, -f 127.0.0.%g 3 12)" > "$T/held2" &
	holder=$!
	for i in $(seq 50); do [ -s "$T/held2" ] && break; sleep 0.1; done
	expect_eq "the second flood: connected" "$(cat "$T/held2")" 200
	wait "$holder"
	# served again at once, and what it says is what nvq says
	out=$(web_load get "$port" /metrics)
	expect_match "after the floods: /metrics" "$out" '^200'
	expect_eq "after the floods: /metrics counts the running job as nvq does" \
	    "$(echo "$out" | sed -n 's/^nvq_jobs{state="RUNNING"} //p')" \
	    "$(nvq list | awk '$0 ~ /RUNNING/' | wc -l)"
	expect_match "after the floods: the dashboard" "$(web_load get "$port" /)" '^200'
	expect_match "after the floods: /api/history" "$(web_load get "$port" /api/history)" '^200.*"wait":'
	# and a minute after the first flood began (the review's check), with no restart
	sleep $(( 60 - (SECONDS - flooded_at) > 0 ? 60 - (SECONDS - flooded_at) : 0 ))
	expect_match "60 s after the flood: the dashboard" "$(web_load get "$port" /)" '^200'
	expect_match "60 s after the flood: /metrics" "$(web_load get "$port" /metrics)" '^200'
	expect_eq "the same nvqd" "$(kill -0 "$NVQD_PID" && echo up)" up
	nvq cancel "$a" > /dev/null
}

t_web_scrapers() {	# 16 clients scraping /metrics over a million finished jobs: another user's submit stays quick
	make_users || { fail "cannot create users"; return; }
	chmod 755 "$T"
	local port; port=$(web_port)
	WEB=127.0.0.1:$port
	# every scrape answered in full: what a scrape costs, not what [web] rate refuses
	write_config "[web]" "listen = $WEB" "rate = 100000"
	local a worst out
	seed_million || return
	start_nvqd || return
	web_load scrape "$port" 16 10 /metrics > "$T/scrapes" &
	local scrapers=$!
	sleep 2
	worst=$(submit_worst nvqta)
	wait "$scrapers"
	echo "    (scrapes: $(cat "$T/scrapes"); the slowest of 5 submits: $worst ms)"
	[ "$worst" -lt 500 ] || fail "a submit took $worst ms under 16 scrapers (wanted < 500)"
	expect_match "the scrapers were answered, none refused" "$(cat "$T/scrapes")" '^200=[0-9]+$'
	# the dashboard's data, 4 clients each: its lists and its sums of the last 7 days
	web_load scrape "$port" 4 8 /api/state > "$T/states" &
	scrapers=$!
	web_load scrape "$port" 4 8 /api/history > "$T/histories" &
	local scrapers2=$!
	sleep 1
	worst=$(submit_worst nvqta)
	wait "$scrapers" "$scrapers2"
	echo "    (/api/state: $(cat "$T/states"), /api/history: $(cat "$T/histories"); the slowest of 5 submits: $worst ms)"
	[ "$worst" -lt 500 ] || fail "a submit took $worst ms under 8 dashboard clients (wanted < 500)"
	expect_match "/api/state answered, none refused" "$(cat "$T/states")" '^200=[0-9]+$'
	expect_match "/api/history answered, none refused" "$(cat "$T/histories")" '^200=[0-9]+$'
	a=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 -n quick true)
	# [web] rate, reloaded: one address asking past 10 a second is refused, cheaply
	write_config "[web]" "listen = $WEB" "rate = 10"
	kill -HUP "$NVQD_PID"
	sleep 0.5
	out=$(web_load scrape "$port" 4 2 /metrics)
	expect_match "rate = 10: 4 scrapers over 2 s, the most refused" "$out" '^200=[1-3][0-9] 429=[0-9]{3,}$'
	wait_state "$a" COMPLETED
	out=$(web_load get "$port" /metrics 127.0.0.2)
	expect_eq "/metrics: what a scan of the history says" "$(web_metrics_match)" same
	expect_eq "/metrics: the finished jobs, history included" \
	    "$(echo "$out" | sed -n 's/^nvq_jobs{state="COMPLETED"} //p')" 1000012
	expect_eq "/metrics: runs counted, history included" \
	    "$(echo "$out" | sed -n 's/^nvq_job_run_seconds_count //p')" 1000012
	expect_eq "/metrics: the history's runs took 1 s: in the le=1 bucket" \
	    "$(echo "$out" | sed -n 's/^nvq_job_run_seconds_bucket{le="1"} //p')" 1000012
}

t_web_energy() {	# a running job's energy on the dashboard, and each user's in /metrics
	command -v chromium-headless-shell > /dev/null && /usr/bin/python3 -c 'import prometheus_client' 2> /dev/null ||
	    { skip "needs a browser and Prometheus' parser: apt-get install chromium-headless-shell python3-prometheus-client (CI has them)"; return; }
	local port; port=$(web_port)
	WEB=127.0.0.1:$port
	write_config "[gpus]" "nvml_library = $HELPERS/libfake-nvml.so.1" "poll = 1s" "[web]" "listen = $WEB"
	export FAKE_NVML_GPUS=1x16G FAKE_NVML_PROCS=$T/procs FAKE_NVML_ENERGY=$T/energy
	: > "$T/procs"
	echo "0 1000000" > "$T/energy"
	start_nvqd || return
	local a out link
	a=$(submit -n hot sleep 300)
	wait_state "$a" RUNNING
	sleep 1.2
	echo "0 4600000" > "$T/energy"	# 3600 J
	sleep 1.5
	link=$(nvq web-token)
	expect_match "state: the running job's energy so far" "$(web_get "/api/state?${link#*\?}")" \
	    '"energy":3600,"energy_how":"alone"'
	web_browser "$T/e.html" "$link" --virtual-time-budget=5000
	expect_match "browser: its energy in the running table" "$(cat "$T/e.html")" \
	    '<td class=" energy">1.00 Wh \(alone\)</td>'
	nvq cancel "$a" > /dev/null
	wait_state "$a" CANCELLED
	web_get /metrics > "$T/metrics" || fail "GET /metrics"
	out=$(/usr/bin/python3 - "$T/metrics" <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
for f in text_string_to_metric_families(open(sys.argv[1]).read()):
    for s in f.samples:
        if s.name == "nvq_energy_joules_total":
            print(f.type, s.labels["user"], s.value)
PY
)
	expect_eq "metrics: root's joules, a counter" "$out" "counter root 3600.0"
	stop_nvqd
	unset FAKE_NVML_GPUS FAKE_NVML_PROCS FAKE_NVML_ENERGY
}

# the longest: started first when tests run at once (run.sh -j)
SLOW+=(t_web_flood t_web_scrapers)
