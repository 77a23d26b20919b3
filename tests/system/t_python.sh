# t_python.sh: the Python package (python/nvq) against a real nvqd with
# virtual GPUs: tests/python/test_nvq.py's classes, one nvqd each, then
# make install and pip install of the package.

# py_case CLASS: that class of tests/python/test_nvq.py against this test's nvqd
py_case() {
	command -v python3 > /dev/null || { skip "needs python3"; return; }
	mkdir -p "$T/py" && chmod 700 "$T/py"
	PYTHONPATH=$ROOT/python NVQ_TEST_SEEDED=${NVQ_TEST_SEEDED:-0} NVQ_TEST_HELD=3000 NVQ_BIN=$NVQ_BIN NVQ_SOCKET=$T/sock NVQ_TEST_DIR=$T/py \
	    timeout 120 python3 tests/python/test_nvq.py "$1" > "$T/py.log" 2>&1
	local rc=$?
	sed 's/^/    | /' "$T/py.log" | grep -v '^    | *$' | grep -E -- '(ok|FAIL|ERROR|skipped|nvqd said|frames pushed|^    \| Ran)' 
	[ $rc = 0 ] || { fail "python3 test_nvq.py $1 exited $rc"; tail -n 40 "$T/py.log"; }
	return $rc
}

t_python_codec() {	# the frame codec, sizes and times, a submit's fields, the private folder
	py_case TestCodec
}

t_python_executor() {	# functions as jobs: results, map, remote tracebacks, unloadable results, time limit
	write_config
	start_nvqd || return
	py_case TestExecutor
}

t_python_cancel() {	# a pending Future's cancel cancels its job; shutdown(cancel_futures=True)
	write_config
	start_nvqd || return
	py_case TestCancel
}

t_python_sweep() {	# call folders of a driver that died go at the next start, unless their job is queued
	write_config
	start_nvqd || return
	py_case TestSweep
}

t_python_push() {	# futures complete from the watch's frames, not by polling (a proxy counts them)
	write_config
	start_nvqd || return
	py_case TestPush
}

t_python_client() {	# Client: submit, list, show, wait, log, cancel, history, gpus, nvqd's errors
	write_config
	start_nvqd || return
	py_case TestClient
}

t_python_restart() {	# a Future completes after nvqd restarted under it: its watch is opened again
	write_config
	start_nvqd || return
	mkdir -p "$T/py" && chmod 700 "$T/py"
	py_case TestRestart &
	local py=$! i
	for i in $(seq 200); do [ -s "$T/py/running" ] && break; sleep 0.05; done
	[ -s "$T/py/running" ] || { fail "the future's job never ran"; wait $py; return; }
	stop_nvqd
	sleep 0.5
	start_nvqd
	wait $py || fail "the Executor's test failed (above)"
	expect_eq "the job ran through the restart" "$(state "$(cat "$T/py/running")")" COMPLETED
}

t_python_pages() {	# Client.history() reads every page (2,501 jobs: three pages of 1,000)
	write_config
	start_nvqd || return
	local seed
	seed=$(submit -g 0 -n seed true)
	wait_state "$seed" COMPLETED || return
	stop_nvqd
	history_seed "$T/nvq.db" "$seed" 2500 || { fail "cannot seed the history"; return; }
	start_nvqd || return
	NVQ_TEST_SEEDED=2500 py_case TestPages
}

t_python_install() {	# make install puts the package where python3 finds it; pip install ./python
	local root=$T/root py=/usr/bin/python3 dir
	[ -x $py ] || py=$(command -v python3)
	make -s install BUILD="$BUILD" DESTDIR="$root" PREFIX=/usr > "$T/install.log" 2>&1 ||
	    { fail "make install: $(tail -3 "$T/install.log")"; return; }
	dir=$(cd / && $py -c 'import sys; print(" ".join(sys.path))')
	[[ " $dir " == *" /usr/lib/python3/dist-packages "* ]] ||
	    { skip "$py does not search /usr/lib/python3/dist-packages (not Debian's python3)"; return; }
	expect_eq "installed: the package's files" \
	    "$(cd "$root/usr/lib/python3/dist-packages" && ls nvq | tr '\n' ' ')" \
	    "__init__.py _conn.py _errors.py _options.py _proto.py _units.py _worker.py client.py executor.py "
	expect_eq "import nvq from there" "$(cd / && PYTHONPATH=$root/usr/lib/python3/dist-packages \
	    $py -c 'import nvq; print(nvq.__file__, nvq.Executor.__mro__[1].__name__)')" \
	    "$root/usr/lib/python3/dist-packages/nvq/__init__.py Executor"
	expect_match "help(nvq) shows the example" "$(cd / && PYTHONPATH=$root/usr/lib/python3/dist-packages \
	    $py -c 'import nvq, pydoc; print(pydoc.render_doc(nvq, renderer=pydoc.plaintext))')" \
	    "with nvq.Executor\(gpus=1"
	make -s uninstall BUILD="$BUILD" DESTDIR="$root" PREFIX=/usr > /dev/null 2>&1
	expect_eq "uninstall takes the package away" "$(ls "$root/usr/lib/python3/dist-packages" 2>&1)" ""
	if ! python3 -m pip --version > /dev/null 2>&1; then
		skip "pip install ./python: no pip for python3 here"
		return
	fi
	# offline: the package builds itself (python/_build.py), nothing to download
	python3 -m pip install -q --no-index --target "$T/site" ./python \
	    > "$T/pip.log" 2>&1 || { fail "pip install ./python: $(tail -3 "$T/pip.log")"; return; }
	expect_eq "pip install: import nvq" "$(cd / && PYTHONPATH=$T/site python3 -c \
	    'import nvq; print(nvq.__file__)')" "$T/site/nvq/__init__.py"
}
