# Starts and stops the throwaway PostgreSQL and Redis servers the test suite uses.
# Sourced by bin/test (and usable by hand: `source bin/services.sh; services_start`).
# Everything lives under $SERVICES_DIR (a new temporary directory per run, so that
# concurrent runs never stop each other's servers) and listens on 127.0.0.1 only.

SERVICES_DIR=${SERVICES_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/agent-sessions-services.XXXXXX")}

_free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

_pg_bindir() {
    local dir
    for dir in /usr/lib/postgresql/*/bin; do
        [ -x "$dir/initdb" ] && { echo "$dir"; return 0; }
    done
    return 1
}

_apt_install() {
    # Debian packages, installed only when missing (CI starts from a fresh machine).
    [ "$(id -u)" = 0 ] || { echo "need root to apt-get install $*" >&2; return 1; }
    if [ -z "${_APT_UPDATED:-}" ]; then
        apt-get update -qq >/dev/null && _APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

ensure_system_packages() {
    local missing=()
    _pg_bindir >/dev/null || missing+=(postgresql)
    command -v redis-server >/dev/null || missing+=(redis-server)
    # The page tests' browser (tests/browser.py). Fonts are only a recommendation of
    # Chromium; screenshots need real glyphs.
    command -v chromium-headless-shell >/dev/null || missing+=(chromium-headless-shell fonts-liberation)
    # The colour emoji font (a pinned conversation's mark is one; without it the
    # screenshots show an empty box): installed when it can be, never required.
    [ "$(id -u)" != 0 ] || [ -f /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf ] ||
        missing+=(fonts-noto-color-emoji)
    # makemessages and msgfmt, for the translation tests (tests/test_translations.py).
    command -v msgfmt >/dev/null || missing+=(gettext)
    if [ ${#missing[@]} -gt 0 ]; then
        echo "installing Debian packages: ${missing[*]}"
        _apt_install "${missing[@]}"
    fi
}

# initdb refuses to run as root; run the cluster as the 'postgres' system user then.
_as_pg_user() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

postgres_start() {
    local bindir; bindir=$(_pg_bindir) || { echo "PostgreSQL is not installed" >&2; return 1; }
    local data="$SERVICES_DIR/pg"
    rm -rf "$data"; mkdir -p "$data"
    if [ "$(id -u)" = 0 ]; then chmod 755 "$SERVICES_DIR"; chown postgres "$data"; fi
    PGPORT=$(_free_port)
    _as_pg_user "$bindir/initdb" -D "$data/data" -U postgres -A trust -E UTF8 >"$SERVICES_DIR/pg-initdb.log"
    _as_pg_user "$bindir/pg_ctl" -D "$data/data" -l "$data/server.log" -w -o \
        "-h 127.0.0.1 -p $PGPORT -k $data -c fsync=off -c synchronous_commit=off -c max_connections=200" \
        start >/dev/null
    export PGHOST=127.0.0.1 PGPORT PGUSER=postgres PGDATABASE=agent_sessions
    "$bindir/createdb" agent_sessions
    echo "PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') on 127.0.0.1:$PGPORT"
}

postgres_stop() {
    local bindir; bindir=$(_pg_bindir) || return 0
    [ -d "$SERVICES_DIR/pg/data" ] && _as_pg_user "$bindir/pg_ctl" -D "$SERVICES_DIR/pg/data" -m fast stop >/dev/null 2>&1
    return 0
}

redis_start() {
    local port; port=$(_free_port)
    mkdir -p "$SERVICES_DIR/redis"
    redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no \
        --dir "$SERVICES_DIR/redis" --pidfile "$SERVICES_DIR/redis/redis.pid" \
        --logfile "$SERVICES_DIR/redis/redis.log" --daemonize yes
    export REDIS_URL="redis://127.0.0.1:$port/0"
    for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    echo "Redis on 127.0.0.1:$port"
}

redis_stop() {
    local pidfile="$SERVICES_DIR/redis/redis.pid"
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null
    return 0
}

services_start() {
    mkdir -p "$SERVICES_DIR"
    ensure_system_packages
    postgres_start
    redis_start
}

services_stop() {
    redis_stop
    postgres_stop
    rm -rf "$SERVICES_DIR"
}
