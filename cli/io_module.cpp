// SPDX-License-Identifier: MIT
// libgpurent_io.so: its exported factories live in the *_io libraries linked whole into it
// (providers/http/curl_http_client.cpp, sync/ssh_transport.cpp, providers/state/sqlite_state_store.cpp).
