// Host tensor: construction, typed access, conversion, comparison and .npy I/O.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "helpers.h"

namespace tessera {
namespace {

using test::F;
using test::ThrowsUserError;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("tessera_ops_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

TEST(Tensor, DefaultIsF32ScalarZero) {
  Tensor t;
  EXPECT_EQ(t.dtype(), DType::f32);
  EXPECT_EQ(t.rank(), 0);
  EXPECT_EQ(t.element_count(), 1);
  EXPECT_EQ(t.at(0), 0.0f);
}

TEST(Tensor, ZerosAndBytes) {
  Tensor t(DType::f16, Shape{3, 5, 2});
  EXPECT_EQ(t.element_count(), 30);
  EXPECT_EQ(t.bytes(), 60u);
  for (std::int64_t i = 0; i < 30; ++i) EXPECT_EQ(t.at(i), 0.0f);
  Tensor empty(DType::i32, Shape{4, 0});
  EXPECT_EQ(empty.element_count(), 0);
  EXPECT_EQ(empty.bytes(), 0u);
}

TEST(Tensor, FromVectorStorageOrderIsFastestFirst) {
  // (rows=2, cols=3) row-major is Tessera {3, 2}: element (row 1, col 2) is index {2, 1}.
  const Tensor t = F(Shape{3, 2}, {0, 1, 2, 10, 11, 12});
  EXPECT_EQ(t.at({2, 1}), 12.0f);
  EXPECT_EQ(t.at({0, 1}), 10.0f);
  EXPECT_EQ(t.flat_index({1, 1}), 4);
  EXPECT_EQ(t.data<float>()[5], 12.0f);
  EXPECT_EQ(t.span<float>().size(), 6u);
}

TEST(Tensor, FromVectorConvertsWithRoundingAndSaturation) {
  const Tensor t = Tensor::from_vector(Shape{4}, {300.0f, -2.5f, 3.5f, -1000.0f}, DType::i8);
  EXPECT_EQ(t.data<std::int8_t>()[0], 127);
  EXPECT_EQ(t.data<std::int8_t>()[1], -2);  // round half to even
  EXPECT_EQ(t.data<std::int8_t>()[2], 4);
  EXPECT_EQ(t.data<std::int8_t>()[3], -128);
}

TEST(Tensor, FromIntsAndDoubles) {
  const Tensor a = Tensor::from_ints(DType::u8, Shape{3}, {-5, 7, 1000});
  EXPECT_EQ(a.to_ints(), (std::vector<std::int64_t>{0, 7, 255}));
  const Tensor b = Tensor::from_doubles(DType::bf16, Shape{2}, {1.0, 3.0});
  EXPECT_EQ(b.to_floats(), (std::vector<float>{1.0f, 3.0f}));
  EXPECT_TRUE(ThrowsUserError([] { Tensor::from_ints(DType::i32, Shape{2}, {1}); },
                              {"from_ints", "1 values", "(2)"}));
}

TEST(Tensor, FromBytesChecksSizeAndCanonicalisesBool) {
  const std::vector<std::byte> raw{std::byte{0}, std::byte{7}, std::byte{1}};
  const Tensor t = Tensor::from_bytes(DType::boolean, Shape{3}, raw);
  EXPECT_EQ(t.raw()[1], std::byte{1});
  EXPECT_TRUE(t.at<bool>(1));
  EXPECT_FALSE(t.at<bool>(0));
  EXPECT_TRUE(ThrowsUserError([&] { Tensor::from_bytes(DType::f32, Shape{3}, raw); },
                              {"3 bytes", "needs 12 bytes"}));
}

TEST(Tensor, TypedAccessChecksStorageType) {
  Tensor t(DType::f16, Shape{2});
  EXPECT_NO_THROW(t.data<f16>());
  EXPECT_TRUE(ThrowsUserError([&] { t.data<float>(); }, {"f16", "storage type"}));
  EXPECT_TRUE(ThrowsUserError([&] { (void)t.at(2); }, {"index 2", "out of range"}));
  EXPECT_TRUE(ThrowsUserError([&] { (void)t.at({0, 0}); }, {"2 entries", "rank 1"}));
}

TEST(Tensor, SetConverts) {
  Tensor t(DType::u8, Shape{2});
  t.set(0, 300.0);
  t.set({1}, -4.0);
  EXPECT_EQ(t.at<int>(0), 255);
  EXPECT_EQ(t.at<int>(1), 0);
}

TEST(Tensor, ReshapeKeepsDataAndChecksCount) {
  const Tensor t = F(Shape{3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor r = t.reshape(Shape{6});
  EXPECT_EQ(r.shape(), Shape{6});
  EXPECT_EQ(r.at(5), 6.0f);
  EXPECT_TRUE(ThrowsUserError([&] { (void)t.reshape(Shape{4}); }, {"reshape", "(3, 2)", "(4)"}));
}

TEST(Tensor, AstypeRoundsToNearestEvenAndSaturates) {
  // 1 + 2^-11 is halfway between two f16 values: ties go to the even one (1.0).
  const Tensor t = F(Shape{4}, {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 70000.0f, -0.0f});
  const Tensor h = t.astype(DType::f16);
  EXPECT_EQ(h.at(0), 1.0f);
  EXPECT_EQ(h.at(1), 1.0f + 2 * 0x1p-10f);
  EXPECT_TRUE(std::isinf(h.at(2)));
  const Tensor i = F(Shape{3}, {2.5f, -3.5f, 1e10f}).astype(DType::i32);
  EXPECT_EQ(i.to_ints(), (std::vector<std::int64_t>{2, -4, 2147483647}));
  const Tensor b = F(Shape{3}, {0.0f, 0.5f, -2.0f}).astype(DType::boolean);
  EXPECT_EQ(b.to_ints(), (std::vector<std::int64_t>{0, 1, 1}));
  const Tensor back = b.astype(DType::f32);
  EXPECT_EQ(back.to_floats(), (std::vector<float>{0.0f, 1.0f, 1.0f}));
  const Tensor n = F(Shape{1}, {std::nanf("")}).astype(DType::u16);
  EXPECT_EQ(n.at<int>(0), 0);
}

TEST(Tensor, EqualAndCompare) {
  const Tensor a = F(Shape{3}, {1, 2, 3});
  EXPECT_TRUE(equal(a, F(Shape{3}, {1, 2, 3})));
  EXPECT_FALSE(equal(a, F(Shape{3}, {1, 2, 4})));
  EXPECT_FALSE(equal(a, F(Shape{1, 3}, {1, 2, 3})));
  EXPECT_FALSE(equal(a, a.astype(DType::i32)));
  EXPECT_TRUE(allclose(F(Shape{3}, {1, 2, 3.000001f}), a));
  const CompareResult r = compare(F(Shape{3}, {1, 2.5f, 3}), a);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_NE(r.message.find("element 1"), std::string::npos);
  EXPECT_DOUBLE_EQ(r.max_abs_error, 0.5);
  const float nan = std::nanf("");
  EXPECT_TRUE(allclose(F(Shape{2}, {nan, INFINITY}), F(Shape{2}, {nan, INFINITY})));
  EXPECT_FALSE(allclose(F(Shape{1}, {-INFINITY}), F(Shape{1}, {INFINITY})));
  EXPECT_FALSE(compare(a, F(Shape{1, 3}, {1, 2, 3})).ok);
  // Mixed dtypes compare by value.
  EXPECT_TRUE(allclose(a.astype(DType::i16), a));
}

TEST(Tensor, ToStringShowsDtypeShapeAndValues) {
  EXPECT_EQ(F(Shape{2}, {1, 2.5f}).to_string(), "f32(2)[1, 2.5]");
  EXPECT_EQ(F(Shape{3}, {1, 2, 3}).to_string(2), "f32(3)[1, 2, ...]");
}

TEST(Npy, RoundTripsEveryDtype) {
  for (DType dt : kAllDTypes) {
    const Tensor t = Tensor::from_vector(Shape{3, 2, 1}, {0, 1, 2, 3, 4, 5}, dt);
    const Tensor back = decode_npy(encode_npy(t));
    if (dt == DType::bf16) {  // written as f32, exactly
      EXPECT_EQ(back.dtype(), DType::f32);
      EXPECT_TRUE(allclose(back, t, 0, 0));
    } else {
      EXPECT_TRUE(equal(back, t)) << dtype_name(dt);
    }
  }
  const Tensor scalar = Tensor::scalar(DType::i32, 42);
  EXPECT_TRUE(equal(decode_npy(encode_npy(scalar)), scalar));
}

TEST(Npy, HeaderIsNumpyCompatible) {
  const std::vector<std::byte> bytes = encode_npy(F(Shape{3, 2}, {0, 1, 2, 3, 4, 5}));
  const std::string header(
      reinterpret_cast<const char*>(bytes.data()) + 10,
      static_cast<std::size_t>(bytes[8]) | (static_cast<std::size_t>(bytes[9]) << 8));
  // NumPy lists dims outermost first: Tessera {3, 2} is a (2, 3) array.
  EXPECT_NE(header.find("'shape': (2, 3)"), std::string::npos) << header;
  EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos);
  EXPECT_EQ((10 + header.size()) % 64, 0u);
  EXPECT_EQ(header.back(), '\n');
  const std::vector<std::byte> one = encode_npy(F(Shape{3}, {1, 2, 3}));
  const std::string h1(reinterpret_cast<const char*>(one.data()) + 10, 60);
  EXPECT_NE(h1.find("(3,)"), std::string::npos);
}

std::vector<std::byte> make_npy(const std::string& dict, const std::vector<unsigned char>& data,
                                int version = 1) {
  std::string header = dict;
  const std::size_t pre = version == 1 ? 10 : 12;
  header.append((64 - (pre + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::vector<std::byte> out;
  for (int c : {0x93, int{'N'}, int{'U'}, int{'M'}, int{'P'}, int{'Y'}})
    out.push_back(static_cast<std::byte>(c));
  out.push_back(std::byte(version));
  out.push_back(std::byte{0});
  const std::size_t n = header.size();
  out.push_back(std::byte(n & 0xff));
  out.push_back(std::byte((n >> 8) & 0xff));
  if (version != 1) {
    out.push_back(std::byte{0});
    out.push_back(std::byte{0});
  }
  for (char c : header) out.push_back(std::byte(static_cast<unsigned char>(c)));
  for (unsigned char c : data) out.push_back(std::byte{c});
  return out;
}

TEST(Npy, ReadsFortranOrderAndWideTypes) {
  // Fortran order (2, 3) with values a[i][j] = 10*i + j: stored column by column.
  std::vector<unsigned char> data;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 2; ++i) {
      const std::int32_t v = 10 * i + j;
      for (int b = 0; b < 4; ++b) data.push_back(static_cast<unsigned char>((v >> (8 * b)) & 0xff));
    }
  const Tensor t =
      decode_npy(make_npy("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", data));
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(t.to_ints(), (std::vector<std::int64_t>{0, 1, 2, 10, 11, 12}));

  std::vector<unsigned char> i64;
  for (std::int64_t v : {std::int64_t{-3}, std::int64_t{5}})
    for (int b = 0; b < 8; ++b) i64.push_back(static_cast<unsigned char>((v >> (8 * b)) & 0xff));
  const Tensor w =
      decode_npy(make_npy("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", i64, 2));
  EXPECT_EQ(w.dtype(), DType::i64);
  EXPECT_EQ(w.to_ints(), (std::vector<std::int64_t>{-3, 5}));

  std::vector<unsigned char> big(8, 0);
  big[4] = 1;  // 2^32 + 2^56 + 2^63: exact as i64 / u64, not as i32
  big[7] = 0x81;
  const Tensor bi =
      decode_npy(make_npy("{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }", big));
  EXPECT_EQ(bi.at<std::int64_t>(0),
            static_cast<std::int64_t>((std::uint64_t{0x81} << 56) | (std::uint64_t{1} << 32)));
  const Tensor bu =
      decode_npy(make_npy("{'descr': '<u8', 'fortran_order': False, 'shape': (1,), }", big));
  ASSERT_EQ(bu.dtype(), DType::u64);
  EXPECT_EQ(bu.data<std::uint64_t>()[0], (std::uint64_t{0x81} << 56) | (std::uint64_t{1} << 32));

  std::vector<unsigned char> f64(8, 0);
  f64[7] = 0x40;  // 2.0
  const Tensor d =
      decode_npy(make_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", f64));
  EXPECT_EQ(d.dtype(), DType::f64);
  EXPECT_EQ(d.rank(), 0);
  EXPECT_EQ(d.at<double>(0), 2.0);
}

TEST(Npy, MalformedFilesNameTheFile) {
  const std::vector<std::byte> junk(20, std::byte{'x'});
  EXPECT_TRUE(ThrowsUserError([&] { decode_npy(junk, "junk.npy"); }, {"junk.npy", "magic"}));
  EXPECT_TRUE(ThrowsUserError(
      [] {
        decode_npy(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", {0, 0}),
                   "short.npy");
      },
      {"short.npy", "needs 16"}));
  EXPECT_TRUE(ThrowsUserError(
      [] {
        decode_npy(make_npy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", {}),
                   "complex.npy");
      },
      {"complex.npy", "<c8"}));
  EXPECT_TRUE(ThrowsUserError(
      [] {
        decode_npy(make_npy("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", {}),
                   "be.npy");
      },
      {"be.npy", "big-endian"}));
  EXPECT_TRUE(ThrowsUserError(
      [] {
        decode_npy(
            make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }",
                     {0, 0, 0, 0}),
            "deep.npy");
      },
      {"deep.npy", "9 dimensions"}));
  EXPECT_TRUE(ThrowsUserError([] { decode_npy(make_npy("{'descr': '<f4', }", {}), "nokey.npy"); },
                              {"nokey.npy", "fortran_order"}));
  EXPECT_TRUE(ThrowsUserError([] { load_npy("/nonexistent/dir/x.npy"); },
                              {"/nonexistent/dir/x.npy", "cannot open"}));
}

TEST(Npy, SaveAndLoadFile) {
  const std::string path = temp_path("roundtrip.npy");
  const Tensor t = test::random_tensor(Shape{7, 3, 2}, 5);
  save_npy(t, path);
  const Tensor back = load_npy(path);
  std::remove(path.c_str());
  EXPECT_TRUE(equal(back, t));
}

}  // namespace
}  // namespace tessera
