#!/usr/bin/env bash
# incl.sh DATA: inclusive (children) % of key kernel/user entry points
perf report -i $1 --children --sort sym --stdio -g none 2>/dev/null | grep -v '^#' | grep -v '^$' > /tmp/tlsprof/.incl
for s in entry_SYSCALL_64_after_hwframe do_syscall_64 syscall_exit_to_user_mode __do_sys_io_uring_enter io_submit_sqes io_send io_recv io_cqring_wait io_run_local_work __io_run_local_work tcp_sendmsg tcp_recvmsg sock_recvmsg sock_sendmsg __tcp_transmit_skb __dev_queue_xmit do_softirq.part.0 handle_softirqs net_rx_action tcp_v4_rcv tcp_rcv_established sock_def_readable ep_poll_callback try_to_wake_up tcp_ack __x64_sys_epoll_ctl do_epoll_ctl do_epoll_wait ep_poll ep_send_events tcp_poll __x64_sys_clock_nanosleep do_nanosleep hrtimer_nanosleep schedule __schedule finish_task_switch.isra.0 ksys_read ksys_write vfs_read vfs_write __x64_sys_recvfrom __x64_sys_sendto asm_sysvec_apic_timer_interrupt asm_sysvec_call_function_single _copy_to_user _copy_from_user skb_copy_datagram_iter _raw_spin_unlock_irqrestore; do
  awk -v s="$s" '$NF==s {printf "%-40s children %7s self %7s\n", s, $1, $2; f=1} END{}' /tmp/tlsprof/.incl | head -1
done
