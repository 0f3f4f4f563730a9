#pragma once
// A fixed set of reusable work items shared by a pipeline's stages: the input stage takes one, the
// last stage gives it back. As many items as the pipeline has tokens in flight, so taking one never
// waits; reusing them keeps buffers' capacity, so the steady state allocates nothing per record.

#include <tbb/concurrent_queue.h>

#include <memory>
#include <vector>

namespace qmer::app {

template <typename Item>
class batch_pool {
  public:
    explicit batch_pool(size_t count) {
        items_.reserve(count);
        for (size_t i = 0; i < count; ++i) {
            items_.push_back(std::make_unique<Item>());
            free_.push(items_.back().get());
        }
    }
    Item* take() {
        Item* item = nullptr;
        free_.pop(item);  // blocks only if the caller takes more than the pipeline's token count
        return item;
    }
    void give_back(Item* item) { free_.push(item); }
    size_t size() const noexcept { return items_.size(); }

  private:
    std::vector<std::unique_ptr<Item>> items_;
    tbb::concurrent_bounded_queue<Item*> free_;
};

}  // namespace qmer::app
