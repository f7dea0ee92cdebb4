# SPDX-License-Identifier: Apache-2.0
# core/session/: one VM's connection and state machine, and the VM table.
# May call: core/wire, core/config, core/transport. Calls up only through
# the DdmSessionEvents table it is handed.
core_libddmcore_la_SOURCES += %reldir%/vm.c %reldir%/vm.h %reldir%/vm-private.h \
	%reldir%/vm_io.c %reldir%/vm_request.c %reldir%/vm_handshake.c %reldir%/vm_classify.c %reldir%/vm_stream.c %reldir%/vm_ident.c %reldir%/vm_tables.c \
	%reldir%/correlate.c %reldir%/correlate.h %reldir%/logctx.c %reldir%/logctx.h \
	%reldir%/ratelog.c %reldir%/ratelog.h %reldir%/quietlog.h \
	%reldir%/monitor.c %reldir%/monitor.h %reldir%/monitor-private.h \
	%reldir%/portset.c %reldir%/portset.h
