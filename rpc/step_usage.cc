#include "rpc/step_usage.h"

namespace tessera::rpc {

namespace v1 = tessera::v1;

void AddStepUsage(const v1::StepUsage& p, v1::StepUsage* t) {
  if (p.ntasks() == 0) return;
  if (t->ntasks() == 0) {
    *t = p;
    return;
  }
  // Disk figures (h19 s6): only from parts that measured them.
  if (p.disk_measured() && (!t->disk_measured() ||
                            p.max_disk_read_bytes() > t->max_disk_read_bytes())) {
    t->set_max_disk_read_bytes(p.max_disk_read_bytes());
    t->set_max_disk_read_node(p.max_disk_read_node());
    t->set_max_disk_read_task(p.max_disk_read_task());
  }
  if (p.disk_measured() && (!t->disk_measured() ||
                            p.max_disk_write_bytes() > t->max_disk_write_bytes())) {
    t->set_max_disk_write_bytes(p.max_disk_write_bytes());
    t->set_max_disk_write_node(p.max_disk_write_node());
    t->set_max_disk_write_task(p.max_disk_write_task());
  }
  if (p.disk_measured()) {
    t->set_disk_measured(true);
    t->set_sum_disk_read_bytes(t->sum_disk_read_bytes() + p.sum_disk_read_bytes());
    t->set_sum_disk_write_bytes(t->sum_disk_write_bytes() + p.sum_disk_write_bytes());
  }
  if (p.max_rss_kib() > t->max_rss_kib()) {
    t->set_max_rss_kib(p.max_rss_kib());
    t->set_max_rss_node(p.max_rss_node());
    t->set_max_rss_task(p.max_rss_task());
  }
  if (p.max_vmsize_kib() > t->max_vmsize_kib()) {
    t->set_max_vmsize_kib(p.max_vmsize_kib());
    t->set_max_vmsize_node(p.max_vmsize_node());
    t->set_max_vmsize_task(p.max_vmsize_task());
  }
  if (p.min_cpu_ms() < t->min_cpu_ms()) {
    t->set_min_cpu_ms(p.min_cpu_ms());
    t->set_min_cpu_node(p.min_cpu_node());
    t->set_min_cpu_task(p.min_cpu_task());
  }
  if (p.max_pages() > t->max_pages()) {
    t->set_max_pages(p.max_pages());
    t->set_max_pages_node(p.max_pages_node());
    t->set_max_pages_task(p.max_pages_task());
  }
  t->set_ntasks(t->ntasks() + p.ntasks());
  t->set_sum_rss_kib(t->sum_rss_kib() + p.sum_rss_kib());
  t->set_sum_vmsize_kib(t->sum_vmsize_kib() + p.sum_vmsize_kib());
  t->set_user_cpu_ms(t->user_cpu_ms() + p.user_cpu_ms());
  t->set_system_cpu_ms(t->system_cpu_ms() + p.system_cpu_ms());
  t->set_sum_pages(t->sum_pages() + p.sum_pages());
  t->set_cur_rss_kib(t->cur_rss_kib() + p.cur_rss_kib());
}

}  // namespace tessera::rpc
