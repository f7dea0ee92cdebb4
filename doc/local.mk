# SPDX-License-Identifier: Apache-2.0
# doc/: user and developer documentation (installed under $(docdir)).
dist_doc_DATA += %reldir%/architecture.md %reldir%/protocol.md %reldir%/fuzzing.md %reldir%/hprof.md %reldir%/trace.md \
	%reldir%/viewdebug.md %reldir%/monitoring.md %reldir%/web.md %reldir%/web-api.md %reldir%/memory.md \
	%reldir%/benchmarks.md %reldir%/json.md
