// io/index_use.hpp: one exclusive use of an index file at a time, seen from any process; released
// when its holder goes.
#include "io/index_use.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "temp_folder.hpp"

namespace {

using qmer::io::index_exclusive_use;

TEST(index_exclusive_use, a_second_taker_is_refused_until_the_first_lets_go) {
    qmer::test::temp_folder const folder("qmer-index-use");
    std::string const path = (folder / "x.qmer").string();
    std::ofstream(path) << "index";
    {
        auto first = index_exclusive_use::try_take(path);
        ASSERT_TRUE(first.has_value());
        // Another open of the file, in this process: refused.
        EXPECT_FALSE(index_exclusive_use::try_take(path).has_value());
        // In another process: refused too.
        pid_t const child = ::fork();
        if (child == 0) ::_exit(index_exclusive_use::try_take(path).has_value() ? 1 : 0);
        int status = 0;
        ASSERT_EQ(::waitpid(child, &status, 0), child);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        // Moving keeps the lock.
        auto moved = std::move(*first);
        first.reset();
        EXPECT_FALSE(index_exclusive_use::try_take(path).has_value());
    }
    EXPECT_TRUE(index_exclusive_use::try_take(path).has_value());
}

TEST(index_exclusive_use, a_killed_holder_releases_it) {
    qmer::test::temp_folder const folder("qmer-index-use");
    std::string const path = (folder / "x.qmer").string();
    std::ofstream(path) << "index";
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    pid_t const child = ::fork();
    if (child == 0) {
        auto held = index_exclusive_use::try_take(path);
        char const c = held ? 'y' : 'n';
        (void)!::write(ready[1], &c, 1);
        ::pause();
        ::_exit(0);
    }
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    EXPECT_EQ(c, 'y');
    EXPECT_FALSE(index_exclusive_use::try_take(path).has_value());
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    EXPECT_TRUE(index_exclusive_use::try_take(path).has_value());
    ::close(ready[0]);
    ::close(ready[1]);
}

TEST(index_exclusive_use, a_missing_file_is_not_claimed) {
    EXPECT_FALSE(index_exclusive_use::try_take("/nonexistent/x.qmer").has_value());
}

}  // namespace
