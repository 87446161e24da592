//===- DescriptorTest.cpp - Invariants of the descriptor structs ----------===//

#include "qtensor/Descriptor/Descriptor.h"

#include <gtest/gtest.h>

using namespace qtensor;

namespace {
AffineDescriptor w4Group(int64_t groupSize, int64_t axis = 1) {
  AffineDescriptor d;
  d.code = {4, false};
  d.granularity = Granularity::Group;
  d.axis = axis;
  d.groupSize = groupSize;
  return d;
}
} // namespace

// M8.1 0x07: N=3, K=5, G=4 gives 2 groups per row, 6 in all.
TEST(Descriptor, RowBoundedGroupsWithTail) {
  AffineDescriptor d = w4Group(4);
  EXPECT_TRUE(verifyDescriptorForShape(d, {3, 5}));
  EXPECT_EQ(qparamShape(d, {3, 5}), (std::vector<int64_t>{3, 2}));
}

// M8.9 0x03B: 4096x4096, G=128 -> scales [4096, 32].
TEST(Descriptor, W4G128ScaleShape) {
  EXPECT_EQ(qparamShape(w4Group(128), {4096, 4096}),
            (std::vector<int64_t>{4096, 32}));
}

TEST(Descriptor, PerAxisAndPerTensorShapes) {
  AffineDescriptor d;
  d.code = {8, false};
  d.granularity = Granularity::PerAxis;
  d.axis = 0;
  EXPECT_EQ(qparamShape(d, {64, 256}), (std::vector<int64_t>{64}));
  d.granularity = Granularity::PerTensor;
  d.axis = -1;
  EXPECT_TRUE(qparamShape(d, {64, 256}).empty());
}

TEST(Descriptor, ExactTailNeedsMultiple) {
  AffineDescriptor d = w4Group(4);
  d.tail = TailRule::Exact;
  Status s = verifyDescriptorForShape(d, {3, 5});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "tail rule 'exact' needs dimension 1 (5) to be a "
                         "multiple of the group size 4");
  EXPECT_TRUE(verifyDescriptorForShape(d, {3, 8}));
}

TEST(Descriptor, CodeBounds) {
  AffineDescriptor d;
  d.code = {4, true};
  EXPECT_EQ(codeBounds(d).min, -8);
  EXPECT_EQ(codeBounds(d).max, 7);
  d.narrowRange = true;
  EXPECT_EQ(codeBounds(d).min, -7);
  d.code = {3, false};
  d.narrowRange = false;
  EXPECT_EQ(codeBounds(d).min, 0);
  EXPECT_EQ(codeBounds(d).max, 7);
}

TEST(Descriptor, PermutationMustBeBijection) {
  AffineDescriptor d = w4Group(2);
  d.permutation = std::vector<int64_t>{3, 2, 1, 0};
  EXPECT_TRUE(verifyDescriptorForShape(d, {2, 4}));
  d.permutation = std::vector<int64_t>{0, 0, 1, 2};
  Status s = verifyDescriptorForShape(d, {2, 4});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "permutation is not a bijection: 0 appears twice");
}

TEST(Descriptor, LayoutTileMultiples) {
  LayoutDescriptor l;
  l.family = "tiled";
  l.tile = {128, 64};
  l.padding = {0, 32};
  EXPECT_TRUE(verifyLayoutForShape(l, {4096, 4064}));
  l.padding = {0, 0};
  Status s = verifyLayoutForShape(l, {4096, 4064});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "dimension 1 (4064 + padding 0) is not a multiple of "
                         "the tile size 64");
}

TEST(Descriptor, SchemeAndZeroPointAgree) {
  AffineDescriptor d = w4Group(4);
  d.zeroPoint = ZeroPointKind::Integer;
  EXPECT_FALSE(verifyDescriptor(d));
  d.scheme = QuantScheme::Asymmetric;
  EXPECT_TRUE(verifyDescriptor(d));
  d.zeroPoint = ZeroPointKind::None;
  EXPECT_FALSE(verifyDescriptor(d));
}
