#include "staging_pool.h"

#include <algorithm>

namespace loom::cuda {

StagingPool::StagingPool(Backend backend, size_t capacity_bytes, size_t chunk_bytes)
    : backend_(std::move(backend)),
      capacity_bytes_(capacity_bytes),
      chunk_bytes_(std::max(chunk_bytes, kMinBlockBytes)) {}

StagingPool::~StagingPool() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& b : blocks_)
    if (b->state == Block::State::kInFlight) backend_.wait_fence(b->fence);
  while (!blocks_.empty()) free_block(blocks_.size() - 1);
}

size_t StagingPool::block_size_for(size_t bytes) const {
  // Powers of two from kMinBlockBytes, so blocks of slightly different
  // chunks are interchangeable; chunk_bytes_ at most.
  size_t size = kMinBlockBytes;
  while (size < bytes && size < chunk_bytes_) size *= 2;
  return std::min(size, chunk_bytes_);
}

void StagingPool::collect_passed() {
  for (const auto& b : blocks_)
    if (b->state == Block::State::kInFlight && backend_.fence_passed(b->fence)) b->state = Block::State::kIdle;
}

StagingPool::Block* StagingPool::find_idle(size_t bytes) {
  Block* best = nullptr;
  for (const auto& b : blocks_)
    if (b->state == Block::State::kIdle && b->bytes >= bytes && (best == nullptr || b->bytes < best->bytes))
      best = b.get();
  return best;
}

void StagingPool::free_block(size_t index) {
  Block& b = *blocks_[index];
  backend_.destroy_fence(b.fence);
  backend_.free(b.host);
  stats_.held_bytes -= b.bytes;
  blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(index));
}

StagingPool::Block* StagingPool::acquire(size_t bytes) {
  std::unique_lock<std::mutex> lock(mutex_);
  const size_t size = block_size_for(bytes);
  if (bytes == 0 || bytes > chunk_bytes_ || size > capacity_bytes_) {
    ++stats_.unstaged_chunks;
    return nullptr;
  }
  for (;;) {
    collect_passed();
    if (Block* b = find_idle(bytes)) {
      b->state = Block::State::kReserved;
      return b;
    }
    // Make room: idle blocks are all too small for this chunk.
    for (size_t i = blocks_.size(); i-- > 0 && stats_.held_bytes + size > capacity_bytes_;)
      if (blocks_[i]->state == Block::State::kIdle && blocks_[i]->waiters == 0) {
        free_block(i);
        ++stats_.blocks_freed;
      }
    if (stats_.held_bytes + size <= capacity_bytes_) {
      auto block = std::make_unique<Block>();
      block->host = backend_.alloc(size);
      block->fence = block->host != nullptr ? backend_.make_fence() : nullptr;
      if (block->fence == nullptr) {
        if (block->host != nullptr) backend_.free(block->host);
        ++stats_.unstaged_chunks;
        return nullptr;
      }
      block->bytes = size;
      block->state = Block::State::kReserved;
      stats_.held_bytes += size;
      stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.held_bytes);
      blocks_.push_back(std::move(block));
      return blocks_.back().get();
    }
    // Full of blocks other copies are using: wait for the oldest in flight.
    Block* oldest = nullptr;
    for (const auto& b : blocks_)
      if (b->state == Block::State::kInFlight && (oldest == nullptr || b->sequence < oldest->sequence))
        oldest = b.get();
    if (oldest == nullptr) {
      // Every block is reserved by copies being queued now: do not wait
      // on work that is not queued yet.
      ++stats_.unstaged_chunks;
      return nullptr;
    }
    ++stats_.waits;
    ++oldest->waiters;  // not freed (nor its fence destroyed) while waited on
    lock.unlock();
    backend_.wait_fence(oldest->fence);
    lock.lock();
    --oldest->waiters;
  }
}

void StagingPool::mark_in_flight(Block* block, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  block->state = Block::State::kInFlight;
  block->sequence = next_sequence_++;
  ++stats_.staged_chunks;
  stats_.staged_bytes += bytes;
}

void StagingPool::give_back(Block* block) {
  std::lock_guard<std::mutex> lock(mutex_);
  block->state = Block::State::kIdle;
}

void StagingPool::trim() {
  std::lock_guard<std::mutex> lock(mutex_);
  collect_passed();
  for (size_t i = blocks_.size(); i-- > 0;)
    if (blocks_[i]->state == Block::State::kIdle && blocks_[i]->waiters == 0) {
      free_block(i);
      ++stats_.blocks_freed;
    }
}

StagingStats StagingPool::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace loom::cuda
