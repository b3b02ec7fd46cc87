# bench/h2o-conf.sh - sourced by bench/h2.sh and bench/h2-client.sh: h2o's configuration for
# their HTTP/2 runs. One thread, h2c on one port and TLS on the other, /plaintext from an
# mruby handler (a constant body, as bench/peers has it).
#
# write_h2o_conf DIR H2C_PORT TLS_PORT [EXTRA_PATHS]: writes DIR/h2o/h2o.conf, with its pid and
# error log beside it and DIR/chain.pem and DIR/key.pem as the certificate; EXTRA_PATHS are more
# entries of `paths:`, indented as they must be there (six spaces).
write_h2o_conf() {
  local dir=$1 h2c=$2 tls=$3 extra=${4:-}
  cat > "$dir/h2o/h2o.conf" <<EOF
num-threads: 1
user: root
max-connections: 16000
pid-file: $dir/h2o/h2o.pid
error-log: $dir/h2o/error.log
listen:
  host: 127.0.0.1
  port: $h2c
listen:
  host: 127.0.0.1
  port: $tls
  ssl:
    certificate-file: $dir/chain.pem
    key-file: $dir/key.pem
hosts:
  default:
    paths:
      /plaintext:
        mruby.handler: |
          Proc.new do |env|
            [200, {"content-type" => "text/plain"}, ["Hello, World!"]]
          end
EOF
  [ -z "$extra" ] || printf '%s\n' "$extra" >> "$dir/h2o/h2o.conf"
}
