#pragma once
// The core thread: all controller state lives on one Asio io_context run by one thread (so it
// is a strand). Other threads (gRPC handlers, the store's writer) hand work to it.
#include <boost/asio.hpp>

#include <future>
#include <thread>
#include <type_traits>

namespace tessera::ctld {

class Core {
 public:
  Core() : guard_(io_.get_executor()) {}
  ~Core() { Stop(); }
  void Start() { thread_ = std::thread([this] { io_.run(); }); }
  void Stop() {
    guard_.reset();
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }
  boost::asio::io_context& io() { return io_; }
  bool InCore() const { return std::this_thread::get_id() == thread_.get_id(); }

  template <typename F>
  void Post(F f) { boost::asio::post(io_, std::move(f)); }

  // Runs f on the core thread and waits for its result.
  template <typename F>
  auto Call(F f) -> std::invoke_result_t<F> {
    using R = std::invoke_result_t<F>;
    if (InCore()) return f();
    std::packaged_task<R()> task(std::move(f));
    auto fut = task.get_future();
    boost::asio::post(io_, [&task] { task(); });
    return fut.get();
  }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_;
  std::thread thread_;
};

}  // namespace tessera::ctld
