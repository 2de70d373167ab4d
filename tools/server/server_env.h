// The environment variables hearth-server reads beside its options' own (cli.md §3.2):
// Google Vertex AI's AIP_* (other-native-routes.md §18), and the bounds of the resumable
// stream buffers, which tests shorten.
#pragma once

#include "base/status.h"
#include "server/server.h"

namespace hearth::server_tool {

// AIP_MODE=PREDICTION: AIP_HTTP_PORT (default 8080) replaces the port, AIP_PREDICT_ROUTE
// (default /predict) and AIP_HEALTH_ROUTE (optional) are served; a route without its
// leading '/' gets one. Any other AIP_MODE leaves everything as it is. An AIP_HTTP_PORT that
// is not a port, or a predict route that is already a route, is an error.
Status apply_vertex_env(server::ServerConfig& config);

// HEARTH_STREAM_TTL_MS, HEARTH_STREAM_MAX_SESSIONS, HEARTH_STREAM_MAX_BYTES: a finished
// stream's retention and the store's bounds (server/streams/stream_store.h), for tests and
// tuning; unset: the defaults. A value that is not a whole number is an error.
Status apply_stream_env(server::ServerConfig& config);

}  // namespace hearth::server_tool
