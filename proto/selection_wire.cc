#include "proto/selection_wire.h"

namespace zarrd {

Selection FromWire(const v1::Selection& selection) {
  Selection out;
  for (const auto& item : selection.items()) {
    switch (item.kind_case()) {
      case v1::SelectionItem::kIndex:
        out.push_back(SelectionItem::Index(item.index()));
        break;
      case v1::SelectionItem::kEllipsis:
        out.push_back(SelectionItem::Ellipsis());
        break;
      case v1::SelectionItem::kSlice: {
        const auto& s = item.slice();
        out.push_back(
            SelectionItem::Slice(s.has_start() ? std::optional<int64_t>(s.start()) : std::nullopt,
                                 s.has_stop() ? std::optional<int64_t>(s.stop()) : std::nullopt,
                                 s.has_step() ? std::optional<int64_t>(s.step()) : std::nullopt));
        break;
      }
      default:
        out.push_back(SelectionItem::Slice());
    }
  }
  return out;
}

bool IsAdvanced(const v1::Selection& selection) {
  return selection.mode() == v1::SELECTION_MODE_ORTHOGONAL ||
         selection.mode() == v1::SELECTION_MODE_VECTORIZED ||
         selection.mode() == v1::SELECTION_MODE_MASK;
}

Result<Selection> BasicFromWire(const v1::Selection& selection, const std::vector<int64_t>& shape,
                                const std::vector<int64_t>& chunk_shape) {
  for (const auto& item : selection.items()) {
    if (item.has_indices() || item.kind_case() == v1::SelectionItem::kMask) {
      return InvalidArgument("selection: index lists and masks need mode ORTHOGONAL or VECTORIZED");
    }
  }
  if (selection.mode() == v1::SELECTION_MODE_BLOCK) {
    return BlockSelection(FromWire(selection), shape, chunk_shape);
  }
  if (selection.mode() != v1::SELECTION_MODE_BASIC) {
    return InvalidArgument("selection: unknown mode " + std::to_string(selection.mode()));
  }
  return FromWire(selection);
}

Result<ResolvedAdvanced> AdvancedFromWire(const v1::Selection& selection,
                                          const std::vector<int64_t>& shape, int64_t max_elements) {
  if (selection.mode() == v1::SELECTION_MODE_MASK) {
    const std::string& mask = selection.mask();
    return ResolveMask(std::vector<uint8_t>(mask.begin(), mask.end()), shape);
  }
  std::vector<AdvancedItem> items;
  for (const auto& item : selection.items()) {
    if (item.has_indices()) {
      const auto& v = item.indices().values();
      items.push_back(AdvancedItem::Indices(std::vector<int64_t>(v.begin(), v.end())));
    } else if (item.kind_case() == v1::SelectionItem::kMask) {
      items.push_back(
          AdvancedItem::Mask(std::vector<uint8_t>(item.mask().begin(), item.mask().end())));
    } else {
      v1::Selection one;
      *one.add_items() = item;
      items.push_back(AdvancedItem::Basic(FromWire(one).at(0)));
    }
  }
  const auto mode = selection.mode() == v1::SELECTION_MODE_VECTORIZED ? AdvancedMode::kVectorized
                                                                      : AdvancedMode::kOrthogonal;
  const std::vector<int64_t> points(selection.point_shape().begin(), selection.point_shape().end());
  return ResolveAdvanced(items, mode, points, shape, max_elements);
}

v1::Selection ToWire(const Selection& selection) {
  v1::Selection out;
  for (const auto& item : selection) {
    auto* p = out.add_items();
    switch (item.kind) {
      case SelectionItem::Kind::kIndex:
        p->set_index(item.index);
        break;
      case SelectionItem::Kind::kEllipsis:
        p->set_ellipsis(true);
        break;
      case SelectionItem::Kind::kSlice: {
        auto* s = p->mutable_slice();
        if (item.start) s->set_start(*item.start);
        if (item.stop) s->set_stop(*item.stop);
        if (item.step) s->set_step(*item.step);
      }
    }
  }
  return out;
}

v1::Selection ToWire(const ResolvedSelection& selection) {
  v1::Selection out;
  for (const DimSelection& dim : selection.dims) {
    auto* p = out.add_items();
    if (dim.dropped) {
      p->set_index(dim.start);
      continue;
    }
    auto* s = p->mutable_slice();
    s->set_start(dim.start);
    s->set_step(dim.step);
    // One past the last index; for a negative step that reaches index 0 it would be -1, which
    // numpy reads as "the end", so the stop is left open.
    const int64_t stop = dim.start + dim.count * dim.step;
    if (dim.count == 0) {
      s->set_stop(dim.start);
    } else if (stop >= 0) {
      s->set_stop(stop);
    }
  }
  return out;
}

}  // namespace zarrd
