/* SPDX-License-Identifier: Apache-2.0
 *
 * Runtime configuration of the monitor: every bound, timer and switch in
 * one place, with its default. Filled from the command line by cli/options.c (and
 * passed to a background server as its argv). Most are options
 * (doc/ddmon.1); the inflate, pending-request and write-queue caps are
 * fixed defaults (doc/architecture.md, "Bounds").
 */
#ifndef DDM_CONFIG_H
#define DDM_CONFIG_H

#include <glib.h>
#include <stdint.h>

#include <ddmon/plugin.h> /* the limits plugins see: DDM_REQUEST_* */

/** At most this many ports in all --scan-ports ranges together. */
#define DDM_CONFIG_MAX_SCAN_PORTS 65535u

typedef struct DdmPortRange {
    guint16 first, last;
} DdmPortRange;

typedef struct DdmConfig {
    /* discovery */
    gboolean scan_local;          /* --scan local (default on) */
    gboolean scan_adb;            /* --scan adb (default on) */
    char *scan_host;              /* host scanned by local discovery: "127.0.0.1" */
    GArray *scan_ranges;          /* DdmPortRange; default 8000-8040 */
    guint scan_interval_ms;       /* default 2000 */
    GPtrArray *connect;           /* char* "HOST:PORT[=DEBUGPORT]" from --connect */
    /* adb discovery */
    char *adb_path;               /* --adb PATH, NULL = "adb" on PATH */
    gboolean adb_start;           /* spawn "adb start-server" when none runs (default yes) */
    /* sessions */
    gboolean tcp_version_probe;   /* TCP targets: ask VirtualMachine.Version before any DDM
                                     packet and send DDM only to Dalvik/ART (default TRUE;
                                     --tcp-probe=helo turns it off). OpenJDK's agent can crash
                                     on vendor command sets (JDK-8382537). */
    guint connect_timeout_ms;     /* --connect-timeout: DDM_CONFIG_CONNECT_TIMEOUT_DEFAULT_MS */
    guint handshake_timeout_ms;   /* the JDWP handshake's deadline both ways: a VM's echo
                                     (core/session) and a debugger's handshake on a debugger
                                     port, from its accept (core/relay); default
                                     DDM_CONFIG_HANDSHAKE_TIMEOUT_DEFAULT_MS (also for 0) */
    guint request_timeout_ms;     /* default per-request timeout: DDM_REQUEST_TIMEOUT_DEFAULT_MS
                                     (at most DDM_REQUEST_TIMEOUT_MAX_MS) */
    guint max_pending;            /* pending requests per VM: DDM_REQUEST_MAX_PENDING */
    gsize max_packet;             /* JDWP packet cap: DDM_REQUEST_MAX_PACKET (256 MiB) */
    guint64 max_stream;           /* streamed DDM event cap (heap dumps): 4 GiB - 1, a JDWP
                                     packet's own limit */
    gsize max_inflate;            /* ZLIB inflate cap: 16 MiB (one inflate stays under 50 ms) */
    gsize max_write_queue;        /* bytes queued to one peer before it is dropped: 512 MiB */
    gsize max_buffers;            /* --max-buffers: the memory budget of every peer's packet
                                     buffers together (VMs and debuggers):
                                     DDM_CONFIG_MAX_BUFFERS_DEFAULT; the peer whose packet
                                     would go past it is refused (doc/protocol.md, "Limits") */
    /* relay */
    gboolean relay;               /* debugger ports at all (FALSE for a one-shot snapshot) */
    char *listen_host;            /* "127.0.0.1" unless the user says otherwise */
    guint16 debug_port_base;      /* 8600 */
    guint16 selected_port;        /* 8700 (0 = off) */
    char *select;                 /* --select PID|APP */
    char *port_map_path;          /* where the relay remembers app -> debugger port across
                                     restarts (the server sets it from the socket path:
                                     ddm_config_port_map_path); NULL = not remembered */
    /* plugins */
    GPtrArray *plugin_dirs;       /* --plugin-dir, in order */
    gboolean use_env_plugin_path; /* DDMON_PLUGIN_PATH honoured (not when setuid) */
    char *installed_plugin_dir;   /* compiled-in default */
    GPtrArray *plugins_only;      /* --plugins=a,b: only these, and they are required */
    GPtrArray *plugins_disabled;  /* --disable-plugin=x */
    GPtrArray *chunks;            /* --chunks=THCR,...: char* 4-letter names; NULL = every type enabled */
    GHashTable *plugin_opts;      /* "name.key" -> "value" from --plugin-opt */
    /* server */
    char *socket_path;            /* control socket; NULL = default location */
    char *http_listen;            /* --http[=ADDR]: the web dashboard's address (listen_addr.h
                                     syntax); NULL = no dashboard */
    char *metrics_listen;         /* --metrics[=ADDR]: the token-free GET /metrics listener
                                     (listen_addr.h syntax); NULL = none */
    GPtrArray *server_args;       /* char*: the server options this server was started with,
                                     as the client normalizes them ("--name=value", paths
                                     absolute; not --socket), reported by the version op so a
                                     client can tell when its options differ; may be NULL */
} DdmConfig;

/** A VM's connect deadline unless --connect-timeout says otherwise. */
#define DDM_CONFIG_CONNECT_TIMEOUT_DEFAULT_MS 3000u
/** The JDWP handshake's deadline when handshake_timeout_ms is 0. */
#define DDM_CONFIG_HANDSHAKE_TIMEOUT_DEFAULT_MS 5000u
/** @c's handshake deadline in ms: its handshake_timeout_ms, or
 *  DDM_CONFIG_HANDSHAKE_TIMEOUT_DEFAULT_MS when that is 0 (a VM's echo and a
 *  debugger's handshake alike). */
static inline guint ddm_config_handshake_timeout_ms(const DdmConfig *c)
{
    return c->handshake_timeout_ms ? c->handshake_timeout_ms
                                   : DDM_CONFIG_HANDSHAKE_TIMEOUT_DEFAULT_MS;
}

/** A config with every default set. (transfer full) */
DdmConfig *ddm_config_new(void);
void ddm_config_free(DdmConfig *c);
/** Parse "8000-8040,9000" into c->scan_ranges (replacing). */
gboolean ddm_config_set_scan_ranges(DdmConfig *c, const char *spec, GError **error);
/** Parse "local,adb" (or "none"). */
gboolean ddm_config_set_scan(DdmConfig *c, const char *spec, GError **error);
/** Parse a comma list of chunk names; unknown-looking names are errors.
 *  "all" resets to NULL (every type). */
gboolean ddm_config_set_chunks(DdmConfig *c, const char *spec, GError **error);
/** Add "name.key=value". */
gboolean ddm_config_add_plugin_opt(DdmConfig *c, const char *spec, GError **error);
/** The default control socket path: $XDG_RUNTIME_DIR/ddmon/ddmon.sock, else /tmp/ddmon-UID/ddmon.sock. (transfer full) */
char *ddm_config_default_socket_path(void);
/** The relay's port map file for a server on @socket_path. For the default
 *  socket: $XDG_STATE_HOME/ddmon/ports, else ~/.local/state/ddmon/ports
 *  (kept across reboots as well as server restarts), else, with neither an
 *  absolute $XDG_STATE_HOME nor $HOME, the socket's directory. For another
 *  socket (a private server, a test): next to it, SOCKET.ports without the
 *  ".sock" suffix, as the log and lock files are. (transfer full) */
char *ddm_config_port_map_path(const char *socket_path);

/* ------------------------------------------------------ option values
 * Every option value with a syntax or a range is checked here, not by the
 * command line: the bounds below are the only place a numeric option's
 * range is written down. Each ddm_config_set_* parser either sets the
 * field or fails with G_OPTION_ERROR_BAD_VALUE naming the option, leaving
 * the config unchanged. */

/** Shortest --scan-interval: scanning a port range more often is a busy loop. */
#define DDM_CONFIG_SCAN_INTERVAL_MIN_MS 100u
/** Longest --scan-interval: an hour, as for --request-timeout. */
#define DDM_CONFIG_SCAN_INTERVAL_MAX_MS 3600000u
/** Longest --request-timeout: an hour, the SDK's limit (defined there only). */
#define DDM_CONFIG_REQUEST_TIMEOUT_MAX_MS DDM_REQUEST_TIMEOUT_MAX_MS
/** Longest --connect-timeout and --handshake-timeout: an hour, as for
 *  --request-timeout. */
#define DDM_CONFIG_TIMEOUT_MAX_MS 3600000u
/** Smallest --max-packet: a JDWP header is 11 bytes. */
#define DDM_CONFIG_MIN_PACKET 11u
/** Largest --max-packet: a JDWP length field is 32 bits. */
#define DDM_CONFIG_MAX_PACKET_LIMIT ((guint64)G_MAXUINT32)
/** Default --max-buffers: one packet at the default --max-packet fits, two
 *  such claims together do not. */
#define DDM_CONFIG_MAX_BUFFERS_DEFAULT ((gsize)256 * 1024 * 1024)
/** Smallest --max-buffers: one reader's first buffer (64 KiB). */
#define DDM_CONFIG_MAX_BUFFERS_MIN ((guint64)64 * 1024)

/** The range of one numeric option. */
typedef struct DdmOptionBound {
    const char *option;    /* "--scan-interval"; NULL ends the table */
    guint64 min, max;      /* inclusive */
    gboolean size_suffix;  /* K, M or G (binary multiples) may follow the number */
    const char *below_min; /* the message for a value under min (NULL when min is 0) */
} DdmOptionBound;

/** Every numeric option's bounds, ending with an entry whose option is NULL. */
const DdmOptionBound *ddm_config_option_bounds(void);
/** The bounds of @option ("--max-packet"), or NULL if it has none. */
const DdmOptionBound *ddm_config_option_bound(const char *option);
/** Parse @value (decimal, surrounding spaces ignored, a K/M/G suffix if the
 *  option takes one) and check it against @option's bounds. */
gboolean ddm_config_parse_bounded(const char *option, const char *value, guint64 *out,
                                  GError **error);
/** Check a value parsed elsewhere (an int from GOption) against @option's bounds. */
gboolean ddm_config_check_bound(const char *option, gint64 value, GError **error);

/** --scan-interval MS */
gboolean ddm_config_set_scan_interval(DdmConfig *c, const char *value, GError **error);
/** --request-timeout MS */
gboolean ddm_config_set_request_timeout(DdmConfig *c, const char *value, GError **error);
/** --connect-timeout MS: a VM's connect (TCP, or through the adb server) */
gboolean ddm_config_set_connect_timeout(DdmConfig *c, const char *value, GError **error);
/** --handshake-timeout MS: the JDWP handshake, a VM's echo and a debugger's */
gboolean ddm_config_set_handshake_timeout(DdmConfig *c, const char *value, GError **error);
/** --max-packet BYTES (K, M, G suffixes) */
gboolean ddm_config_set_max_packet(DdmConfig *c, const char *value, GError **error);
gboolean ddm_config_set_max_stream(DdmConfig *c, const char *value, GError **error);
/** --max-buffers BYTES (K, M, G suffixes) */
gboolean ddm_config_set_max_buffers(DdmConfig *c, const char *value, GError **error);
/** --debug-port-base PORT */
gboolean ddm_config_set_debug_port_base(DdmConfig *c, const char *value, GError **error);
/** --selected-port PORT (0 = off) */
gboolean ddm_config_set_selected_port(DdmConfig *c, const char *value, GError **error);
/** --connect HOST:PORT[=DEBUGPORT]: appended to c->connect. */
gboolean ddm_config_add_connect(DdmConfig *c, const char *value, GError **error);
/** The address of a bare --http. */
#define DDM_CONFIG_HTTP_DEFAULT "127.0.0.1:8585"
/** --http[=ADDR]: @value NULL = DDM_CONFIG_HTTP_DEFAULT; checked with
 *  ddm_listen_addr_parse. */
gboolean ddm_config_set_http(DdmConfig *c, const char *value, GError **error);
/** The address of a bare --metrics. */
#define DDM_CONFIG_METRICS_DEFAULT "127.0.0.1:9585"
/** --metrics[=ADDR]: @value NULL = DDM_CONFIG_METRICS_DEFAULT; checked with
 *  ddm_listen_addr_parse. */
gboolean ddm_config_set_metrics(DdmConfig *c, const char *value, GError **error);
/** --tcp-probe version|helo */
gboolean ddm_config_set_tcp_probe(DdmConfig *c, const char *value, GError **error);

#endif /* DDM_CONFIG_H */
