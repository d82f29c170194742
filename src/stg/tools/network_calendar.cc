#include "stg/tools/network_calendar.h"

namespace stg::tools {

size_t NetworkCalendar::ChannelHash::operator()(const Channel& c) const {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (uint64_t v : {static_cast<uint64_t>(c.tag), static_cast<uint64_t>(c.src),
                     static_cast<uint64_t>(c.dst), c.bytes, c.seq}) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ull;
  }
  return static_cast<size_t>(h ^ (h >> 31));
}

void NetworkCalendar::schedule(uint64_t time, EventKind kind, SimCall call, uint64_t payload) {
  events_.push({time, seq_++, kind, call, payload});
}

void NetworkCalendar::at_rank(uint32_t rank, uint64_t delay, SimCall call) {
  const std::pair<uint32_t, uint64_t> key{rank, now_ + delay};
  auto [it, fresh] = batches_.try_emplace(key);
  it->second.push_back(call);
  if (fresh) schedule(key.second, kBatch, SimCall{0, 0, rank, 0});
}

uint64_t NetworkCalendar::entry(Channel c) {
  const auto [it, fresh] = ids_.try_emplace(c, next_entry_);
  if (fresh) {
    entries_[next_entry_].channel = c;
    Channel channel = c;
    channel.seq = 0;
    ++counters_[channel].live;
    ++next_entry_;
  }
  return it->second;
}

// A matched message is done: forget it, and its channel's counters once
// every message on it is matched (numbering then restarts on both sides).
void NetworkCalendar::release(uint64_t id) {
  Channel channel = entries_.at(id).channel;
  ids_.erase(channel);
  entries_.erase(id);
  channel.seq = 0;
  const auto it = counters_.find(channel);
  if (--it->second.live == 0 && it->second.sends == it->second.recvs) counters_.erase(it);
}

void NetworkCalendar::send(int64_t src, int64_t dst, uint64_t bytes, int64_t tag, SimCall on_sent) {
  Channel c{tag, src, dst, bytes, 0};
  c.seq = counters_[c].sends++;
  const uint64_t id = entry(c);
  entries_.at(id).on_sent = on_sent;
  schedule(now_ + network_.message_ns(src, dst, bytes), kArrival, SimCall(), id);
}

void NetworkCalendar::recv(int64_t src, int64_t dst, uint64_t bytes, int64_t tag,
                           SimCall on_received) {
  Channel c{tag, src, dst, bytes, 0};
  c.seq = counters_[c].recvs++;
  const uint64_t id = entry(c);
  Entry& e = entries_.at(id);
  if (e.arrived) {
    release(id);
    schedule(now_, kCall, on_received);
    return;
  }
  e.on_received = on_received;
  e.receive_posted = true;
}

void NetworkCalendar::arrive(uint64_t id) {
  Entry& e = entries_.at(id);
  arrived_.push_back(e.on_sent);
  if (!e.receive_posted) {
    e.arrived = true;
    return;
  }
  arrived_.push_back(e.on_received);
  release(id);
}

bool NetworkCalendar::next(SimCall& call) {
  for (;;) {
    if (in_batch_) {
      std::vector<SimCall>& batch = batches_.at(batch_key_);
      if (batch_pos_ < batch.size()) {
        call = batch[batch_pos_++];
        return true;
      }
      batches_.erase(batch_key_);
      in_batch_ = false;
    }
    if (!arrived_.empty()) {
      call = arrived_.front();
      arrived_.pop_front();
      return true;
    }
    if (events_.empty()) return false;
    const Event e = events_.top();
    events_.pop();
    now_ = e.time;
    if (e.kind == kCall) {
      call = e.call;
      return true;
    }
    if (e.kind == kArrival) {
      arrive(e.payload);
      continue;
    }
    in_batch_ = true;
    batch_key_ = {e.call.rank, e.time};
    batch_pos_ = 0;
  }
}

}  // namespace stg::tools
