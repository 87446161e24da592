//===- ArtifactPathTest.cpp - Path rules and safe opening -----------------===//

#include "ArtifactTestSupport.h"

#include <cstring>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

using namespace arttest;

namespace {

TEST(ArtifactPath, AcceptsPlainRelativePaths) {
  for (const char *p :
       {"model.safetensors", "rank0/model.safetensors", "a/b/c/d.ptx",
        ".hidden", "x..y", "...", "a.b/..c", "ünïcode/名前.bin"})
    EXPECT_TRUE(checkArtifactPath(p))
        << p << ": " << checkArtifactPath(p).message();
}

TEST(ArtifactPath, RejectsEscapesAndOddNames) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "path \"\": is empty"},
      {"/abs/model.safetensors",
       "path \"/abs/model.safetensors\": is absolute; artifact paths are "
       "relative to the artifact root"},
      {"..", "has a '..' component"},
      {"../x", "has a '..' component"},
      {"a/..", "has a '..' component"},
      {"a/../b", "has a '..' component"},
      {".", "has a '.' component"},
      {"a/./b", "has a '.' component"},
      {"a//b", "has an empty component"},
      {"a/", "has an empty component"},
      {"a\\..\\b", "contains a backslash"},
      {std::string("a\0b", 3), "path \"a\\x00b\": contains a NUL byte"},
      {"a\tb", "contains a control character"},
      {"a\x7f", "contains a control character"},
      {std::string(256, 'n'), "has a component of 256 bytes (the limit is "
                              "255)"},
      {std::string(1025, 'n'), "is 1025 bytes long (the limit is 1024)"},
  };
  for (const auto &[path, needle] : cases)
    EXPECT_ERROR_CONTAINS(checkArtifactPath(path), needle);
  std::string deep;
  for (int i = 0; i < 17; ++i)
    deep += (i ? "/d" : "d");
  EXPECT_ERROR_CONTAINS(checkArtifactPath(deep),
                        "has 17 components (the limit is 16)");
  EXPECT_TRUE(checkArtifactPath(std::string(255, 'n')));
}

TEST(ArtifactPath, Sha256KnownVectors) {
  const uint8_t abc[] = {'a', 'b', 'c'};
  auto h = sha256Hex(abc, 3);
  ASSERT_TRUE(h);
  EXPECT_EQ(*h,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  auto e = sha256Hex(nullptr, 0);
  ASSERT_TRUE(e);
  EXPECT_EQ(*e,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

class ArtifactRootTest : public ::testing::Test {
protected:
  void SetUp() override {
    fs::create_directories(dir / "sub");
    writeText(dir / "a.bin", "hello");
    writeText(dir / "sub" / "b.bin", "world!");
    auto r = ArtifactRoot::open(dir.str());
    ASSERT_TRUE(r) << r.message();
    root.emplace(r.take());
  }
  TempDir dir;
  std::optional<ArtifactRoot> root;
};

TEST_F(ArtifactRootTest, OpensRegularFilesAndRecordsIdentity) {
  auto f = root->openFile("sub/b.bin");
  ASSERT_TRUE(f) << f.message();
  EXPECT_EQ(f->size, 6u);
  struct stat st;
  ASSERT_EQ(::stat((dir / "sub" / "b.bin").c_str(), &st), 0);
  EXPECT_EQ(f->inode, static_cast<uint64_t>(st.st_ino));
  EXPECT_EQ(f->device, static_cast<uint64_t>(st.st_dev));
  char buf[6];
  EXPECT_EQ(::pread(f->fd.get(), buf, 6, 0), 6);
  EXPECT_EQ(std::string(buf, 6), "world!");
}

TEST_F(ArtifactRootTest, RejectsBadPathsBeforeTouchingTheFilesystem) {
  EXPECT_ERROR_CONTAINS(root->openFile("../a.bin"), "'..' component");
  EXPECT_ERROR_CONTAINS(root->openFile((dir / "a.bin").string()),
                        "is absolute");
}

TEST_F(ArtifactRootTest, MissingFile) {
  EXPECT_ERROR_CONTAINS(root->openFile("nope.bin"),
                        "/nope.bin: missing (the manifest lists it)");
  EXPECT_ERROR_CONTAINS(root->openFile("nodir/x.bin"),
                        "directory " + dir.str() + "/nodir does not exist");
}

TEST_F(ArtifactRootTest, RefusesSymlinksEvenInsideTheRoot) {
  ASSERT_EQ(::symlink("a.bin", (dir / "link.bin").c_str()), 0);
  EXPECT_ERROR_CONTAINS(root->openFile("link.bin"),
                        "link.bin: is a symbolic link (refused");
  ASSERT_EQ(::symlink("/etc/hostname", (dir / "out.bin").c_str()), 0);
  EXPECT_ERROR_CONTAINS(root->openFile("out.bin"), "is a symbolic link");
  // A symlinked directory component is refused too.
  ASSERT_EQ(::symlink("sub", (dir / "subl").c_str()), 0);
  EXPECT_ERROR_CONTAINS(root->openFile("subl/b.bin"),
                        "directory component " + dir.str() +
                            "/subl cannot be opened: is a symbolic link");
  ASSERT_EQ(::symlink("/", (dir / "rootl").c_str()), 0);
  EXPECT_ERROR_CONTAINS(root->openFile("rootl/etc/passwd"),
                        "is a symbolic link");
  // The real file still opens.
  EXPECT_TRUE(root->openFile("sub/b.bin"));
}

TEST_F(ArtifactRootTest, RefusesNonRegularFiles) {
  EXPECT_ERROR_CONTAINS(root->openFile("sub"),
                        "sub: is a directory; expected a regular file");
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0644), 0);
  // Must not hang: the FIFO is refused before (and would be opened
  // non-blocking after) the check.
  EXPECT_ERROR_CONTAINS(root->openFile("fifo"),
                        "fifo: is a FIFO, not a regular file");
  int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string sockPath = (dir / "sock").string();
  if (sockPath.size() < sizeof(addr.sun_path)) {
    std::strcpy(addr.sun_path, sockPath.c_str());
    ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)), 0);
    EXPECT_ERROR_CONTAINS(root->openFile("sock"), "is a socket");
  }
  ::close(s);
}

TEST_F(ArtifactRootTest, HardLinksNeedThePolicy) {
  ASSERT_EQ(::link((dir / "a.bin").c_str(), (dir / "alias.bin").c_str()), 0);
  EXPECT_ERROR_CONTAINS(root->openFile("a.bin"),
                        "a.bin: has 2 hard links (refused");
  auto f = root->openFile("alias.bin", OpenPolicy{true});
  EXPECT_TRUE(f) << f.message();
}

TEST_F(ArtifactRootTest, OpenVerifiedChecksSizeAndHash) {
  const std::string good =
      *sha256Hex(reinterpret_cast<const uint8_t *>("hello"), 5);
  auto m = root->openVerified("a.bin", 5, good);
  ASSERT_TRUE(m) << m.message();
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(m->data()), m->size()),
            "hello");
  EXPECT_EQ(m->path(), dir.str() + "/a.bin");

  EXPECT_ERROR_CONTAINS(root->openVerified("a.bin", 6, good),
                        dir.str() + "/a.bin: size is 5 bytes but the manifest "
                                    "says 6");
  EXPECT_ERROR_CONTAINS(root->openVerified("a.bin", 5, hexOf('0')),
                        "a.bin: SHA-256 mismatch: the manifest expects " +
                            hexOf('0') + ", the file has " + good);
}

TEST(ArtifactRootOpen, RejectsNonDirectories) {
  TempDir dir;
  writeText(dir / "file", "x");
  EXPECT_ERROR_CONTAINS(ArtifactRoot::open((dir / "file").string()),
                        "cannot open the artifact directory");
  EXPECT_ERROR_CONTAINS(ArtifactRoot::open((dir / "missing").string()),
                        "cannot open the artifact directory");
  EXPECT_ERROR_CONTAINS(ArtifactRoot::open(""), "the path is empty");
}

TEST(ArtifactRootOpen, OpenParentWalksComponents) {
  TempDir dir;
  fs::create_directories(dir / "x" / "y");
  auto root = ArtifactRoot::open(dir.str());
  ASSERT_TRUE(root);
  auto p = root->openParent("x/y/z.bin");
  ASSERT_TRUE(p) << p.message();
  EXPECT_EQ(p->second, "z.bin");
  struct stat a, b;
  ASSERT_EQ(::fstat(p->first.get(), &a), 0);
  ASSERT_EQ(::stat((dir / "x" / "y").c_str(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);
}

} // namespace
