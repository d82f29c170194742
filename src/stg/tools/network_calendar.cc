#include "stg/tools/network_calendar.h"

namespace stg::tools {

size_t NetworkCalendar::ChannelHash::operator()(const Channel& c) const {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (uint64_t v : {static_cast<uint64_t>(c.tag), static_cast<uint64_t>(c.src),
                     static_cast<uint64_t>(c.dst), c.bytes}) {
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

uint32_t NetworkCalendar::new_entry() {
  ++live_entries_;
  if (free_entries_.empty()) {
    entries_.emplace_back();
    return static_cast<uint32_t>(entries_.size() - 1);
  }
  const uint32_t id = free_entries_.back();
  free_entries_.pop_back();
  entries_[id] = Entry();
  return id;
}

void NetworkCalendar::release(uint32_t id) {
  --live_entries_;
  free_entries_.push_back(id);
}

void NetworkCalendar::send(int64_t src, int64_t dst, uint64_t bytes, int64_t tag, SimCall on_sent) {
  const auto open = open_.try_emplace(Channel{tag, src, dst, bytes}).first;
  uint32_t id = 0;
  if (open->second.recvs.empty()) {
    id = new_entry();
    open->second.sends.push_back(id);
  } else {
    id = open->second.recvs.front();
    open->second.recvs.pop_front();
    if (open->second.recvs.empty()) open_.erase(open);
  }
  entries_[id].on_sent = on_sent;
  schedule(now_ + network_.message_ns(src, dst, bytes), kArrival, SimCall(), id);
}

void NetworkCalendar::recv(int64_t src, int64_t dst, uint64_t bytes, int64_t tag,
                           SimCall on_received) {
  const auto open = open_.try_emplace(Channel{tag, src, dst, bytes}).first;
  if (open->second.sends.empty()) {
    const uint32_t id = new_entry();
    open->second.recvs.push_back(id);
    entries_[id].on_received = on_received;
    entries_[id].receive_posted = true;
    return;
  }
  const uint32_t id = open->second.sends.front();
  open->second.sends.pop_front();
  if (open->second.sends.empty()) open_.erase(open);
  if (entries_[id].arrived) {
    release(id);
    schedule(now_, kCall, on_received);
    return;
  }
  entries_[id].on_received = on_received;
  entries_[id].receive_posted = true;
}

void NetworkCalendar::arrive(uint32_t id) {
  Entry& e = entries_[id];
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
      arrive(static_cast<uint32_t>(e.payload));
      continue;
    }
    in_batch_ = true;
    batch_key_ = {e.call.rank, e.time};
    batch_pos_ = 0;
  }
}

}  // namespace stg::tools
