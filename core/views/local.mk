# SPDX-License-Identifier: Apache-2.0
# core/views/: the view store and its JSON and text forms.
# May call: the SDK headers, json-glib and core/wire (json_blob.c uses its
# JSON depth scan); it knows no VM and no plugin.
core_libddmcore_la_SOURCES += %reldir%/views.c %reldir%/views.h %reldir%/views-private.h \
	%reldir%/view_content.c %reldir%/view_build.c %reldir%/view_json.c %reldir%/render.c \
	%reldir%/view_jq.c %reldir%/jq.h %reldir%/jq_text.c %reldir%/jq_text.h %reldir%/json_blob.c %reldir%/json_blob.h \
	%reldir%/text_cut.c %reldir%/text_cut.h %reldir%/interest.c %reldir%/interest.h
