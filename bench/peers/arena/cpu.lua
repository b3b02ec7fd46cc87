-- cpu.lua - wrk script for HttpArena's CPU-bound HTTP/1.1 profiles, with the request shapes of its load generators
-- (HttpArena 28606ba: requests/json-*.raw and json-gzip-*.raw for gcannon, requests/static-rotate.lua for wrk, the
-- upload profile's raw files); the Host header says localhost:8080 whatever the port, as in HttpArena.
--
--   wrk ... -s cpu.lua URL -- json        GET /json/{count}?m= round-robin over (1,3) (5,7) (10,2) (15,5) (25,4) (40,8) (50,6)
--   wrk ... -s cpu.lua URL -- json-comp   the same with Accept-Encoding: gzip, br over (25,4) (40,8) (50,6)
--   wrk ... -s cpu.lua URL -- json-tls    the json rotation, for an https:// URL (requests/json-tls-rotate.lua's seven pairs)
--   wrk ... -s cpu.lua URL -- upload      POST /upload with 500 KB, 2 MB, 10 MB and 20 MB of bytes, the size changing every
--                                         5 requests (gcannon's -r 5 rotation of the four raw files)
--   wrk ... -s cpu.lua URL -- static      the 20 files of the static profile round-robin, Accept-Encoding: br;q=1, gzip;q=0.8
--
-- Differences from HttpArena's clients: the rotation is per wrk thread rather than per connection, and upload bodies are
-- bytes 'x' (the server counts them, it does not look at them).

local reqs, n, i, every = nil, 0, 0, 1

local function get(path, accept)
  local ae = accept and ("Accept-Encoding: " .. accept .. "\r\n") or ""
  return "GET " .. path .. " HTTP/1.1\r\nHost: localhost:8080\r\n" .. ae .. "\r\n"
end

init = function(args)
  local mode = args[1] or "json"
  reqs = {}
  if mode == "json-tls" then mode = "json" end
  if mode == "json" or mode == "json-comp" then
    local pairs_ = mode == "json" and { {1, 3}, {5, 7}, {10, 2}, {15, 5}, {25, 4}, {40, 8}, {50, 6} }
      or { {25, 4}, {40, 8}, {50, 6} }
    for _, p in ipairs(pairs_) do
      table.insert(reqs, get("/json/" .. p[1] .. "?m=" .. p[2], mode == "json-comp" and "gzip, br" or nil))
    end
  elseif mode == "upload" then
    for _, size in ipairs({ 512000, 2097152, 10485760, 20971520 }) do
      table.insert(reqs, "POST /upload HTTP/1.1\r\nHost: localhost:8080\r\nContent-Type: application/octet-stream\r\n"
        .. "Content-Length: " .. size .. "\r\n\r\n" .. string.rep("x", size))
    end
    every = 5
  elseif mode == "static" then
    for _, f in ipairs({ "reset.css", "layout.css", "theme.css", "components.css", "utilities.css", "analytics.js",
                         "helpers.js", "app.js", "vendor.js", "router.js", "header.html", "footer.html", "regular.woff2",
                         "bold.woff2", "logo.svg", "icon-sprite.svg", "hero.webp", "thumb1.webp", "thumb2.webp",
                         "manifest.json" }) do
      table.insert(reqs, get("/static/" .. f, "br;q=1, gzip;q=0.8"))
    end
  else
    error("cpu.lua: unknown mode '" .. mode .. "' (json, json-comp, json-tls, upload, static)")
  end
  n = #reqs
end

request = function()
  local r = reqs[math.floor(i / every) % n + 1]
  i = i + 1
  return r
end
