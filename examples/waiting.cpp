// docs/guide/waiting.md: Event, Parker and the spin-then-park budget.
#include <weft/weft.hpp>

#include <chrono>
#include <thread>

#include "expect.hpp"

int main() {
  int data = 0;
  int seen = 0;
  weft::Event ready;                 // manual-reset: set() releases every waiter
  std::thread t([&] { ready.wait(); seen = data; });
  data = 42;
  ready.set();                       // one atomic exchange; a system call only if someone sleeps
  t.join();
  expect(seen == 42, "everything before set() is visible after wait()");
  expect(ready.is_set(), "an Event stays set until reset()");

  weft::Parker parker;               // one owner parks, anyone unparks; an unpark is never lost
  parker.unpark();
  parker.park();                     // returns at once: the permit was there
  expect(!parker.notified(), "park() consumed the permit");

  weft::Event ev;
  std::thread setter([&] { ev.set(); });
  weft::WaitOptions fast{std::chrono::microseconds(50)};   // spin longer for this wait
  ev.wait(fast);
  setter.join();
  const weft::Calibration& c = weft::calibrate_default();  // measure park+wake here, use it as the budget
  expect(c.samples > 0 && c.wake_ns > 0, "calibrate_default() measured a park+wake round trip");
  return 0;
}
