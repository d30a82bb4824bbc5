#pragma once
// What the parts of `accelbench serve` share (server.hpp; private to accelbench::server): the
// store connection pool and the request slots (store_pool), the server's state, what it knows of
// the request its thread reads (request_state), the connection threads, and the calls each part
// offers the others: authorization and error answers (server_state.cpp), the routes
// (routes.cpp), the checks made before a body is read and the hooks that make them
// (request_checks.cpp), the server that serves connections itself (guarded_server.cpp).
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include "harness/app/server/api.hpp"
#include "harness/app/server/connection.hpp"
#include "harness/app/server/server.hpp"
#include "harness/app/server/tokens.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench::server {

// How long a request waits for one of the --threads request slots before it is answered 503.
constexpr std::chrono::seconds k_slot_wait{10};

// Store connections, one per request being handled: at most `capacity` at once (the request
// slots; a request waits for one, then gets 503). A connection that failed (the database went
// away) is dropped, and the next request opens a fresh one. The idle ones are dropped with it:
// when one connection to a PostgreSQL server failed, the others were most likely cut by the same
// restart, and each would fail one more request before being replaced.
class store_pool {
public:
  store_pool(std::string path, std::size_t capacity)
      : m_path(std::move(path)), m_capacity(capacity) {}

  class lease {
  public:
    lease(store_pool& pool, std::unique_ptr<store::store> s)
        : m_pool(pool), m_store(std::move(s)) {}
    lease(const lease&) = delete;
    lease& operator=(const lease&) = delete;
    ~lease() { m_pool.give_back(std::move(m_store)); }
    store::store& operator*() { return *m_store; }
    void discard() {
      m_store.reset();
      m_pool.drop_idle();
    }

  private:
    store_pool& m_pool;
    std::unique_ptr<store::store> m_store;
  };

  lease acquire() {
    std::unique_lock<std::mutex> lock(m_mutex);
    if (!m_freed.wait_for(lock, k_slot_wait, [this] { return m_leased < m_capacity; }))
      throw api_error(503, "the server is busy; retry later");
    ++m_leased;
    if (!m_free.empty()) {
      auto s = std::move(m_free.back());
      m_free.pop_back();
      return lease(*this, std::move(s));
    }
    lock.unlock();
    try {
      return lease(*this, std::make_unique<store::store>(
                              store::store::open(m_path, store::access::read_write)));
    } catch (...) {
      give_back(nullptr);
      throw;
    }
  }

  void drop_idle() {
    std::vector<std::unique_ptr<store::store>> dropped;
    std::lock_guard<std::mutex> lock(m_mutex);
    dropped.swap(m_free);
  }

private:
  void give_back(std::unique_ptr<store::store> s) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (s)
      m_free.push_back(std::move(s));
    --m_leased;
    m_freed.notify_one();
  }
  std::string m_path;
  std::size_t m_capacity, m_leased = 0;
  std::mutex m_mutex;
  std::condition_variable m_freed;
  std::vector<std::unique_ptr<store::store>> m_free;
};

connection_limits limits_of(const serve_options& o);

// Requests of one connection before it is closed (a client reconnects; no client keeps a thread).
constexpr std::size_t k_keep_alive_requests = 100;

struct server_state {
  serve_options opt;
  store_pool pool;
  // The health endpoint's own slot and store connection: it answers while every request slot is
  // taken (a monitor must tell a busy server from a dead one).
  store_pool health_pool;
  connection_limits limits;
  connection_counter counter;
  explicit server_state(const serve_options& o, const std::string& path)
      : opt(o), pool(path, o.threads), health_pool(path, 1), limits(limits_of(o)),
        counter(o.max_connections_per_client, o.max_connections) {}
};

// What the server knows of the request its thread is reading: its connection, when it began, and
// a refusal decided from its head alone (before any of its body is read). cpp-httplib calls the
// handlers of one request on the thread that reads it, so the state is per thread.
struct request_state {
  connection* conn = nullptr;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  double cpu0 = 0;
  connection::framing framing = connection::framing::none;
  bool checked = false;
  int status = 0; // a refusal: its status and message
  std::string message;
};
extern thread_local request_state t_request;
// Set while the accept thread runs a connection itself: the server holds its most connections.
extern thread_local bool t_over_capacity;

// A thread per connection, at most `most` at once. A connection waiting for its request costs a
// thread blocked in poll, not one of the --threads request slots, so slow clients cannot take the
// slots from others. Over the limit, the accept thread turns the connection away itself
// (t_over_capacity), without waiting.
class connection_threads final : public httplib::TaskQueue {
public:
  explicit connection_threads(size_t most) : m_most(most) {}
  void enqueue(std::function<void()> fn) override {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (m_live < m_most) {
        ++m_live;
        try {
          std::thread([this, fn = std::move(fn)] { run(fn); }).detach();
          return;
        } catch (const std::system_error&) {
          --m_live; // no thread to be had: turned away like any connection over the limit
        }
      }
    }
    t_over_capacity = true;
    fn();
    t_over_capacity = false;
  }
  void shutdown() override {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_done.wait(lock, [this] { return m_live == 0; });
  }

private:
  void run(const std::function<void()>& fn) {
    fn();
    std::lock_guard<std::mutex> lock(m_mutex);
    --m_live;
    m_done.notify_all();
  }
  size_t m_most, m_live = 0;
  std::mutex m_mutex;
  std::condition_variable m_done;
};

// The server's log (stderr), one line at a time.
void log_line(const std::string& line);
// An error answer: {"error": message, "status": status}.
void send_error(httplib::Response& res, int status, const std::string& message);
// The role a request has, or an api_error (401/403). Only the header is read: a token is never
// taken from the URL (URLs end up in logs and histories).
void authorize(store::store& db, const httplib::Request& req, role need, bool public_read);
// fn(store) on a store connection of `pool`; a connection that failed (storage_error: the
// database went away) is dropped, not given back.
template <class Fn> void with_store(store_pool& pool, const Fn& fn) {
  auto lease = pool.acquire();
  try {
    fn(*lease);
  } catch (const storage_error&) {
    lease.discard();
    throw;
  }
}
// The log line of a database outage a request ran into.
void log_database_error(const httplib::Request& req, const storage_error& e);
// CPU time of the calling thread, in milliseconds.
double thread_cpu_ms();

// The routes (routes.cpp): every endpoint and page, and the methods they do not take.
void add_routes(httplib::Server& svr, server_state& st);
// Whether a route serves `path` (with some method).
bool known_path(const std::string& path);

// The hooks of every request (request_checks.cpp): the checks before a body is read, error
// bodies, the headers of every response, the access log, the connection threads.
void add_policies(httplib::Server& svr, server_state& st);
// Called by cpp-httplib once the head is read, before anything else: how the body is framed, and
// whether it is refused by its framing alone. A chunked body is decoded by the connection (which
// bounds it), so cpp-httplib is shown a body that simply ends.
void read_framing(const server_state& st, httplib::Request& req);

// The server (guarded_server.cpp), HTTPS when the options name a certificate and key.
std::unique_ptr<httplib::Server> make_server(server_state& st);

} // namespace accelbench::server
